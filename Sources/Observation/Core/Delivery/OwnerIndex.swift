/// The owner index of an ``ObserverList``: from an owner's identity to the slot of its first
/// `addObserver` entry.
///
/// Open addressing with linear probing and backward-shift deletion (no tombstones), keyed by
/// identities, which are object addresses and never 0. A multiplicative hash is enough for
/// addresses, and the type is not generic, so a registration pays neither `Hasher`'s SipHash nor
/// a metadata look-up for a `Dictionary` specialization it cannot have.
struct OwnerIndex {
  /// One bucket: an identity (0 when empty) and its slot, side by side so that a probe touches
  /// one cache line.
  private struct Bucket {
    var key: UInt
    var slot: Int
  }

  /// The table, managed by hand like the list it indexes: an array's uniqueness check and
  /// overflow-checked indexing were half of an insertion's instructions. `nil` until the first
  /// insertion; freed by ``deallocate()``.
  private var buckets: UnsafeMutablePointer<Bucket>?
  private var capacity = 0
  private(set) var count = 0
  private var shift = UInt.bitWidth
  /// Fibonacci hashing: the golden ratio in fixed point, cut to the word.
  private static var multiplier: UInt { UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64) }

  /// Frees the table; the index must not be used afterwards.
  mutating func deallocate() {
    buckets?.deallocate()
    buckets = nil
    capacity = 0
    count = 0
  }

  /// The slot of `identity`'s entry, or `nil`.
  subscript(identity: UInt) -> Int? {
    @inline(__always) get {
      guard count > 0, let buckets else { return nil }
      let mask = capacity &- 1
      var bucket = home(of: identity)
      while true {
        let key = buckets[bucket].key
        if key == identity { return buckets[bucket].slot }
        if key == 0 { return nil }
        bucket = (bucket &+ 1) & mask
      }
    }
    set {
      if let newValue {
        insert(identity, newValue, replacing: true)
      } else {
        remove(identity)
      }
    }
  }

  /// Maps `identity` to `slot` unless it is already mapped; returns whether it was added.
  mutating func insertIfAbsent(_ identity: UInt, slot: Int) -> Bool {
    insert(identity, slot, replacing: false)
  }

  /// Every (identity, slot) pair, for invariant checks.
  var pairs: [(identity: UInt, slot: Int)] {
    guard let buckets else { return [] }
    return (0..<capacity).compactMap { index in
      buckets[index].key == 0 ? nil : (identity: buckets[index].key, slot: buckets[index].slot)
    }
  }

  @inline(__always)
  private func home(of identity: UInt) -> Int {
    Self.home(of: identity, shift: shift)
  }

  @discardableResult
  private mutating func insert(_ identity: UInt, _ slot: Int, replacing: Bool) -> Bool {
    precondition(identity != 0, "An owner index key is an object's address.")
    if (count &+ 1) &* 4 > capacity &* 3 { grow() }
    guard let buckets else { preconditionFailure("grow() allocates the table") }
    let mask = capacity &- 1
    var bucket = home(of: identity)
    while true {
      let key = buckets[bucket].key
      if key == identity {
        if replacing { buckets[bucket].slot = slot }
        return false
      }
      if key == 0 {
        buckets[bucket] = Bucket(key: identity, slot: slot)
        count &+= 1
        return true
      }
      bucket = (bucket &+ 1) & mask
    }
  }

  private mutating func remove(_ identity: UInt) {
    guard count > 0, let buckets else { return }
    let shift = shift
    let mask = capacity &- 1
    var hole = Self.home(of: identity, shift: shift)
    while buckets[hole].key != identity {
      if buckets[hole].key == 0 { return }
      hole = (hole &+ 1) & mask
    }
    // Backward shift: move later entries of the probe run into the hole when their home bucket
    // does not lie between the hole and their bucket (cyclically), so lookups need no
    // tombstones.
    var bucket = hole
    while true {
      bucket = (bucket &+ 1) & mask
      let key = buckets[bucket].key
      if key == 0 { break }
      let ideal = Self.home(of: key, shift: shift)
      let stays =
        hole <= bucket ? (hole < ideal && ideal <= bucket) : (hole < ideal || ideal <= bucket)
      if !stays {
        buckets[hole] = buckets[bucket]
        hole = bucket
      }
    }
    buckets[hole].key = 0
    count -= 1
  }

  @inline(__always)
  private static func home(of identity: UInt, shift: Int) -> Int {
    Int(truncatingIfNeeded: (identity &* multiplier) >> UInt(shift))
  }

  /// Doubles the table, placing each key directly: every key is distinct and the new table has
  /// room, so no check of the insertion path is needed.
  private mutating func grow() {
    let newCapacity = max(16, capacity * 2)
    let shift = UInt.bitWidth - newCapacity.trailingZeroBitCount
    let grown = UnsafeMutablePointer<Bucket>.allocate(capacity: newCapacity)
    grown.initialize(repeating: Bucket(key: 0, slot: 0), count: newCapacity)
    let mask = newCapacity &- 1
    if let buckets {
      for index in 0..<capacity where buckets[index].key != 0 {
        var bucket = Self.home(of: buckets[index].key, shift: shift)
        while grown[bucket].key != 0 { bucket = (bucket &+ 1) & mask }
        grown[bucket] = buckets[index]
      }
      buckets.deallocate()
    }
    buckets = grown
    capacity = newCapacity
    self.shift = shift
  }
}
