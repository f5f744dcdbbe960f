import Testing

@testable import PropertyObservation

@Suite("Owner index")
struct OwnerIndexTests {
  @Test func randomInsertionsMovesAndRemovalsAgreeWithADictionary() {
    // Keys are 16-byte aligned like object addresses, from a small range so that probe runs
    // collide, wrap around the table and are shifted back by removals.
    var generator = SplitMix64(seed: 7)
    for round in 0..<20 {
      var index = OwnerIndex()
      defer { index.deallocate() }
      var slotOfKey: [UInt: Int] = [:]
      // What the list's entries are to the index: the key at each mapped slot.
      var keyAtSlot: [Int: UInt] = [:]
      let keyRange = 1...(UInt(8 + round * 10))
      for step in 0..<4_000 {
        let key = UInt.random(in: keyRange, using: &generator) * 16
        let identityAt = { [keyAtSlot] (slot: Int) -> UInt in keyAtSlot[slot] ?? 0 }
        switch UInt.random(in: 0..<3, using: &generator) {
        case 0 where slotOfKey.count <= 300:
          let added = index.insertIfAbsent(key, slot: step, identityAt: identityAt)
          #expect(added == (slotOfKey[key] == nil))
          if added {
            slotOfKey[key] = step
            keyAtSlot[step] = key
          }
        case 1:
          if let slot = slotOfKey[key] {
            let moved = index.moveSlot(of: key, from: slot, to: step)
            #expect(moved)
            keyAtSlot[slot] = nil
            keyAtSlot[step] = key
            slotOfKey[key] = step
          } else {
            let movedAbsent = index.moveSlot(of: key, from: step - 1, to: step)
            #expect(!movedAbsent)
          }
        default:
          if let slot = slotOfKey[key] {
            let removedAtWrongSlot = index.removeSlot(slot + 1, of: key)
            #expect(!removedAtWrongSlot)
            let removed = index.removeSlot(slot, of: key)
            #expect(removed)
            slotOfKey[key] = nil
            keyAtSlot[slot] = nil
          } else {
            let removedAbsent = index.removeSlot(step, of: key)
            #expect(!removedAbsent)
          }
        }
        let identities = { [keyAtSlot] (slot: Int) -> UInt in keyAtSlot[slot] ?? 0 }
        #expect(index.slot(of: key, identityAt: identities) == slotOfKey[key])
        guard step % 100 == 0 else { continue }
        #expect(index.count == slotOfKey.count)
        for probe in keyRange
        where index.slot(of: probe * 16, identityAt: identities) != slotOfKey[probe * 16] {
          Issue.record("round \(round), step \(step): key \(probe * 16) disagrees")
          return
        }
      }
      #expect(index.slots.sorted() == slotOfKey.values.sorted())
    }
  }

  // On a 32-bit platform the tag is the whole hash, so no two keys share one.
  @Test(.enabled(if: UInt.bitWidth == 64))
  func keysWhoseTagsCollideAreToldApartByTheirEntries() {
    // The table keeps the upper 32 bits of each key's hash (the key times an odd multiplier):
    // a second key whose hash is 16 more shares them, and is 16-byte aligned too.
    let multiplier = OwnerIndex.multiplier
    var inverse = multiplier
    for _ in 0..<6 { inverse = inverse &* (2 &- multiplier &* inverse) }
    let first = UInt(truncatingIfNeeded: 0x7F00_1234_5670 as UInt64)
    let second = first &+ 16 &* inverse
    #expect(second != first && second % 16 == 0)
    #expect(OwnerIndex.tag(of: first) == OwnerIndex.tag(of: second))
    var index = OwnerIndex()
    defer { index.deallocate() }
    let keyAtSlot: [Int: UInt] = [0: first, 1: second]
    let identityAt = { (slot: Int) -> UInt in keyAtSlot[slot] ?? 0 }
    let addedFirst = index.insertIfAbsent(first, slot: 0, identityAt: identityAt)
    #expect(addedFirst)
    let addedSecond = index.insertIfAbsent(second, slot: 1, identityAt: identityAt)
    #expect(addedSecond)
    let addedSecondAgain = index.insertIfAbsent(second, slot: 2, identityAt: identityAt)
    #expect(!addedSecondAgain)
    #expect(index.slot(of: first, identityAt: identityAt) == 0)
    #expect(index.slot(of: second, identityAt: identityAt) == 1)
    let removedFirst = index.removeSlot(0, of: first)
    #expect(removedFirst)
    #expect(index.slot(of: first, identityAt: identityAt) == nil)
    #expect(index.slot(of: second, identityAt: identityAt) == 1)
  }
}
