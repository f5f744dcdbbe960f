/// The owner index of an ``ObserverList``: from an owner's identity to the slot of its first
/// `addObserver` entry.
///
/// Open addressing with linear probing and backward-shift deletion (no tombstones), keyed by
/// identities, which are object addresses and never 0. A multiplicative hash is enough for
/// addresses, and the type is not generic, so a registration pays neither `Hasher`'s SipHash nor
/// a metadata look-up for a `Dictionary` specialization it cannot have.
struct OwnerIndex {
  /// 0 marks an empty bucket.
  private var keys: [UInt] = []
  private var slots: [Int] = []
  private(set) var count = 0
  private var shift = UInt.bitWidth
  /// Fibonacci hashing: the golden ratio in fixed point, cut to the word.
  private static var multiplier: UInt { UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64) }

  /// The slot of `identity`'s entry, or `nil`.
  subscript(identity: UInt) -> Int? {
    get {
      guard count > 0 else { return nil }
      var bucket = home(of: identity)
      let mask = keys.count - 1
      while true {
        let key = keys[bucket]
        if key == identity { return slots[bucket] }
        if key == 0 { return nil }
        bucket = (bucket + 1) & mask
      }
    }
    set {
      if let newValue { insert(identity, newValue) } else { remove(identity) }
    }
  }

  /// Every (identity, slot) pair, for invariant checks.
  var pairs: [(identity: UInt, slot: Int)] {
    zip(keys, slots).filter { $0.0 != 0 }.map { (identity: $0.0, slot: $0.1) }
  }

  private func home(of identity: UInt) -> Int {
    Int(truncatingIfNeeded: (identity &* Self.multiplier) >> UInt(shift))
  }

  private mutating func insert(_ identity: UInt, _ slot: Int) {
    precondition(identity != 0, "An owner index key is an object's address.")
    if (count + 1) * 4 > keys.count * 3 { grow() }
    var bucket = home(of: identity)
    let mask = keys.count - 1
    while true {
      let key = keys[bucket]
      if key == identity {
        slots[bucket] = slot
        return
      }
      if key == 0 {
        keys[bucket] = identity
        slots[bucket] = slot
        count += 1
        return
      }
      bucket = (bucket + 1) & mask
    }
  }

  private mutating func remove(_ identity: UInt) {
    guard count > 0 else { return }
    let mask = keys.count - 1
    var hole = home(of: identity)
    while keys[hole] != identity {
      if keys[hole] == 0 { return }
      hole = (hole + 1) & mask
    }
    // Backward shift: move later entries of the probe run into the hole when their home bucket
    // does not lie between the hole and their bucket (cyclically), so lookups need no tombstones.
    var bucket = hole
    while true {
      bucket = (bucket + 1) & mask
      let key = keys[bucket]
      if key == 0 { break }
      let ideal = home(of: key)
      let stays =
        hole <= bucket ? (hole < ideal && ideal <= bucket) : (hole < ideal || ideal <= bucket)
      if !stays {
        keys[hole] = key
        slots[hole] = slots[bucket]
        hole = bucket
      }
    }
    keys[hole] = 0
    count -= 1
  }

  private mutating func grow() {
    let oldKeys = keys
    let oldSlots = slots
    let capacity = max(16, keys.count * 2)
    keys = Array(repeating: 0, count: capacity)
    slots = Array(repeating: 0, count: capacity)
    shift = UInt.bitWidth - capacity.trailingZeroBitCount
    count = 0
    for (key, slot) in zip(oldKeys, oldSlots) where key != 0 { insert(key, slot) }
  }
}
