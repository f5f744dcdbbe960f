import Testing

@testable import PropertyObservation

@Suite("Owner index")
struct OwnerIndexTests {
  @Test func randomInsertionsUpdatesAndRemovalsAgreeWithADictionary() {
    // Keys are 16-byte aligned like object addresses, from a small range so that probe runs
    // collide, wrap around the table and are shifted back by removals.
    var generator = SplitMix64(seed: 7)
    for round in 0..<20 {
      var index = OwnerIndex()
      defer { index.deallocate() }
      var reference: [UInt: Int] = [:]
      let keyRange = 1...(UInt(8 + round * 10))
      for step in 0..<4_000 {
        let key = UInt.random(in: keyRange, using: &generator) * 16
        if Bool.random(using: &generator) || reference.count > 300 {
          index[key] = nil
          reference[key] = nil
        } else {
          index[key] = step
          reference[key] = step
        }
        #expect(index[key] == reference[key])
        guard step % 100 == 0 else { continue }
        #expect(index.count == reference.count)
        for probe in keyRange where index[probe * 16] != reference[probe * 16] {
          Issue.record("round \(round), step \(step): key \(probe * 16) disagrees")
          return
        }
      }
      #expect(
        index.pairs.sorted { $0.identity < $1.identity }.map(\.slot)
          == reference.sorted { $0.key < $1.key }.map(\.value))
    }
  }
}
