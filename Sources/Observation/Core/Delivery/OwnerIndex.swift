/// The owner index of an ``ObserverList``: from an owner's identity to the slot of its first
/// `addObserver` entry.
///
/// Open addressing with linear probing and backward-shift deletion (no tombstones), keyed by
/// identities, which are object addresses. A multiplicative hash is enough for addresses, and
/// the type is not generic, so a registration pays neither `Hasher`'s SipHash nor a metadata
/// look-up for a `Dictionary` specialization it cannot have.
///
/// A bucket is 8 bytes: the upper 32 bits of its key's hash (its *tag*, from which its home
/// bucket also follows) and its slot. It does not hold the key: the entry at the slot does, so a
/// look-up confirms a matching tag against the entry, through the `identityAt` closure its
/// caller passes. Half the size of a bucket that holds its key, the table stays in cache at
/// twice the registrations: at 100 000 owners, a registration spent a fifth of its time
/// waiting for the table.
///
/// The table doubles when an insertion would fill more than four fifths of it. With 8-byte
/// buckets, a probe run at that load still spans a cache line or two. Against three quarters,
/// each table size holds a fifteenth more owners: 100 000 fit in 1 MiB instead of 2, memory
/// that a registration otherwise pays to fault in.
///
/// Each slot is in one bucket at most, so a bucket found by its tag and its slot is that
/// entry's, without a confirmation: moves and removals of a known slot use that.
///
/// Noncopyable, like its list: it owns its table, which ``deallocate()`` frees once.
struct OwnerIndex: ~Copyable {
  /// One bucket; all zero when empty.
  private struct Bucket {
    var tag: UInt32
    /// The slot plus one, so that 0 marks an empty bucket.
    var slotPlusOne: UInt32
  }

  /// The table, managed by hand like the list it indexes: an array's uniqueness check and
  /// overflow-checked indexing were half of an insertion's instructions. `nil` until the first
  /// insertion; freed by ``deallocate()``.
  private var buckets: UnsafeMutablePointer<Bucket>?
  private var capacity = 0
  private(set) var count = 0
  /// 32 minus the table's bit width: a tag shifted right by it is the tag's home bucket.
  private var homeShift: UInt32 = 32
  /// Fibonacci hashing: 2^w divided by the golden ratio, for a word of w bits (odd, so that the
  /// hash is a bijection of the word).
  static var multiplier: UInt {
    UInt.bitWidth == 64
      ? UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64)
      : UInt(truncatingIfNeeded: 0x9E37_79B9 as UInt64)
  }

  /// Frees the table; the index must not be used afterwards.
  mutating func deallocate() {
    buckets?.deallocate()
    buckets = nil
    capacity = 0
    count = 0
  }

  /// The slot of `identity`'s entry, or `nil`; `identityAt` gives the identity of the entry at
  /// a slot, to confirm a matching tag.
  @inline(__always)
  func slot(of identity: UInt, identityAt: (Int) -> UInt) -> Int? {
    guard count > 0, let buckets else { return nil }
    let tag = Self.tag(of: identity)
    let probe = probeRun(of: tag, in: buckets) {
      $0.tag == tag && identityAt(Int($0.slotPlusOne) &- 1) == identity
    }
    return probe.found ? Int(buckets[probe.bucket].slotPlusOne) &- 1 : nil
  }

  /// Maps `identity` to `slot` unless it is already mapped; returns whether it was added.
  /// `identityAt` gives the identity of the entry at a mapped slot, to confirm a matching tag.
  mutating func insertIfAbsent(
    _ identity: UInt, slot: Int, identityAt: (Int) -> UInt
  ) -> Bool {
    precondition(
      UInt64(slot) < UInt64(UInt32.max),
      "An observable holds fewer than 4 294 967 295 registrations.")
    if (count &+ 1) &* 5 > capacity &* 4 { grow() }
    guard let buckets else { preconditionFailure("grow() allocates the table") }
    let tag = Self.tag(of: identity)
    let probe = probeRun(of: tag, in: buckets) {
      $0.tag == tag && identityAt(Int($0.slotPlusOne) &- 1) == identity
    }
    guard !probe.found else { return false }
    buckets[probe.bucket] = Bucket(tag: tag, slotPlusOne: UInt32(truncatingIfNeeded: slot &+ 1))
    count &+= 1
    return true
  }

  /// Points the mapping of `identity` from `oldSlot` to `newSlot`, if `identity` is mapped to
  /// `oldSlot`; returns whether it was.
  @discardableResult
  mutating func moveSlot(of identity: UInt, from oldSlot: Int, to newSlot: Int) -> Bool {
    guard let bucket = bucket(of: identity, at: oldSlot), let buckets else { return false }
    buckets[bucket].slotPlusOne = UInt32(truncatingIfNeeded: newSlot &+ 1)
    return true
  }

  /// Removes the mapping of `identity` to `slot`, if there is one; returns whether there was.
  @discardableResult
  mutating func removeSlot(_ slot: Int, of identity: UInt) -> Bool {
    guard var hole = bucket(of: identity, at: slot), let buckets else { return false }
    // Backward shift: move later buckets of the probe run into the hole when their home bucket
    // does not lie between the hole and their bucket (cyclically), so look-ups need no
    // tombstones.
    let mask = capacity &- 1
    var bucket = hole
    while true {
      bucket = (bucket &+ 1) & mask
      if buckets[bucket].slotPlusOne == 0 { break }
      let ideal = home(of: buckets[bucket].tag)
      let stays =
        hole <= bucket ? (hole < ideal && ideal <= bucket) : (hole < ideal || ideal <= bucket)
      if !stays {
        buckets[hole] = buckets[bucket]
        hole = bucket
      }
    }
    buckets[hole] = Bucket(tag: 0, slotPlusOne: 0)
    count -= 1
    return true
  }

  /// Every mapped slot, for invariant checks.
  var slots: [Int] {
    guard let buckets else { return [] }
    return (0..<capacity).compactMap { index in
      buckets[index].slotPlusOne == 0 ? nil : Int(buckets[index].slotPlusOne) - 1
    }
  }

  /// The bucket that maps `identity` to `slot`: a slot is in one bucket at most, so its tag and
  /// its slot identify it without a confirmation.
  private func bucket(of identity: UInt, at slot: Int) -> Int? {
    guard count > 0, let buckets else { return nil }
    let tag = Self.tag(of: identity)
    let slotPlusOne = UInt32(truncatingIfNeeded: slot &+ 1)
    let probe = probeRun(of: tag, in: buckets) {
      $0.tag == tag && $0.slotPlusOne == slotPlusOne
    }
    return probe.found ? probe.bucket : nil
  }

  /// Walks `tag`'s probe run from its home bucket: the first bucket that `matches`, or else the
  /// empty bucket that ends the run (`found` false), where a new key of that tag goes.
  @inline(__always)
  private func probeRun(
    of tag: UInt32, in buckets: UnsafeMutablePointer<Bucket>, matches: (Bucket) -> Bool
  ) -> (bucket: Int, found: Bool) {
    let mask = capacity &- 1
    var bucket = home(of: tag)
    while buckets[bucket].slotPlusOne != 0 {
      if matches(buckets[bucket]) { return (bucket, true) }
      bucket = (bucket &+ 1) & mask
    }
    return (bucket, false)
  }

  @inline(__always)
  static func tag(of identity: UInt) -> UInt32 {
    // The upper 32 bits of the hash: the best mixed ones. On a 32-bit platform that is the whole
    // hash, a bijection, so tags never collide there.
    UInt32(truncatingIfNeeded: (identity &* multiplier) >> UInt(UInt.bitWidth - 32))
  }

  @inline(__always)
  private func home(of tag: UInt32) -> Int {
    Self.home(of: tag, shift: homeShift)
  }

  /// The home bucket of `tag` in a table whose bit width is 32 minus `shift`.
  @inline(__always)
  private static func home(of tag: UInt32, shift: UInt32) -> Int {
    Int(truncatingIfNeeded: UInt64(tag) >> UInt64(shift))
  }

  /// Doubles the table, placing each bucket directly: every bucket is distinct and the new
  /// table has room, so no check of the insertion path is needed, and a tag gives its home.
  private mutating func grow() {
    let newCapacity = max(16, capacity * 2)
    precondition(
      newCapacity.trailingZeroBitCount <= 32, "The owner index is limited to 2^32 buckets.")
    let newShift = UInt32(32 - newCapacity.trailingZeroBitCount)
    let grown = UnsafeMutablePointer<Bucket>.allocate(capacity: newCapacity)
    grown.initialize(repeating: Bucket(tag: 0, slotPlusOne: 0), count: newCapacity)
    let mask = newCapacity &- 1
    if let buckets {
      for index in 0..<capacity where buckets[index].slotPlusOne != 0 {
        var bucket = Self.home(of: buckets[index].tag, shift: newShift)
        while grown[bucket].slotPlusOne != 0 { bucket = (bucket &+ 1) & mask }
        grown[bucket] = buckets[index]
      }
      buckets.deallocate()
    }
    buckets = grown
    capacity = newCapacity
    homeShift = newShift
  }
}
