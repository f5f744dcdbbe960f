/// The registrations of one ``Observable``, in registration order, in one contiguous buffer.
///
/// The buffer is managed by hand rather than through `Array` so that the delivering thread can
/// walk it through a stable pointer while callbacks run: during a round nothing appends to it or
/// moves it (registrations made during a round are queued), entries are only marked removed, and
/// removed or dead entries are compacted in place once the round is over. Outside rounds,
/// removals also only mark (and release the closure), and the list is compacted once marked
/// entries make up half of it, so removing many registrations one by one stays linear. Setting
/// a value never allocates or copies the list.
///
/// Not thread-safe: ``Observable`` guards it with its lock and its delivering-thread rule.
struct ObserverList<Value> {
  typealias Entry = ObserverEntry<Value>

  private(set) var base: UnsafeMutablePointer<Entry>
  private(set) var count = 0
  private var capacity: Int
  /// How many kept entries want `.old`, so a round with none skips that pass.
  private(set) var oldCount = 0
  /// How many entries are marked removed but still in the buffer.
  private(set) var markedCount = 0

  init() {
    capacity = 4
    base = .allocate(capacity: capacity)
  }

  /// Deinitializes every entry and frees the buffer; the list must not be used afterwards.
  mutating func deallocate() {
    base.deinitialize(count: count)  // the owning observable is in its deinit: no lock is held
    base.deallocate()
    count = 0
  }

  typealias Callback = (Value, ObservableOptions) -> Void

  /// Appends `entry`. When the buffer is full, entries of dead owners are dropped first (so a
  /// list that sees registrations but no sets stays bounded by its live observers); their
  /// closures go to `released`.
  mutating func append(_ entry: Entry, released: inout [Callback]) {
    if count == capacity {
      compact(released: &released)
      if count * 4 >= capacity * 3 { grow() }
    }
    (base + count).initialize(to: entry)
    count += 1
    if entry.wantsOld { oldCount += 1 }
  }

  /// Marks the registrations `selection` names removed; with `taking`, also moves their closures
  /// to `released` (only when no round runs: a round may be running one of them). Returns
  /// whether any was found.
  ///
  /// - Complexity: O(*n*); the scan compares one word per entry and loads a weak reference only
  ///   for binding entries when removing by owner.
  @discardableResult
  mutating func remove(
    _ selection: Selection,
    released: inout [Callback],
    taking: Bool
  ) -> Bool {
    var found = false
    for index in 0..<count where !base[index].isRemoved && base[index].isSelected(by: selection) {
      markRemoved(at: index)
      if taking, let callback = base[index].takeCallback() { released.append(callback) }
      found = true
      if selection.isUnique { break }
    }
    if found && taking { removeMarkedIfWorthIt() }
    return found
  }

  mutating func markRemoved(at index: Int) {
    if base[index].wantsOld { oldCount -= 1 }
    base[index].markRemoved()
    markedCount += 1
  }

  /// Drops the marked entries once they are at least half of the buffer: removing them one at a
  /// time would move the whole tail on every removal, making mass removal quadratic. Only for
  /// marked entries whose closures were already taken.
  private mutating func removeMarkedIfWorthIt() {
    if markedCount * 2 >= count {
      var none: [Callback] = []
      removeMarked(released: &none)
    }
  }

  /// Removes, in place and keeping order, the entries marked removed, moving any closure they
  /// still hold to `released`. Each run of kept entries moves with one bulk move (a memmove where
  /// entries are bitwise-takable) rather than entry by entry through a predicate: in this
  /// unspecialized code that costs ~60 ns per entry, which made releasing n tokens one by one
  /// take seconds for n = 5000.
  mutating func removeMarked(released: inout [Callback]) {
    var index = 0
    while index < count && !base[index].isRemoved { index += 1 }
    var kept = index
    while index < count {
      if base[index].isRemoved {
        if let callback = base[index].takeCallback() { released.append(callback) }
        (base + index).deinitialize(count: 1)
        index += 1
        continue
      }
      var end = index + 1
      while end < count && !base[end].isRemoved { end += 1 }
      (base + kept).moveInitialize(from: base + index, count: end - index)
      kept += end - index
      index = end
    }
    count = kept
    markedCount = 0
  }

  /// Drops removed entries and entries whose owner is gone, moving their closures to `released`.
  mutating func compact(released: inout [Callback]) {
    for index in 0..<count where !base[index].isRemoved && !base[index].isLive {
      markRemoved(at: index)
    }
    removeMarked(released: &released)
  }

  /// The number of entries that can still be called. Costs a weak load per owner entry.
  var liveCount: Int {
    var live = 0
    for index in 0..<count where base[index].isLive { live += 1 }
    return live
  }

  #if DEBUG
    /// Stops the program if the counters disagree with the entries.
    func _checkInvariants() {
      var old = 0
      var marked = 0
      for index in 0..<count {
        if base[index].wantsOld { old += 1 }
        if base[index].isRemoved { marked += 1 }
      }
      precondition(old == oldCount, "oldCount \(oldCount) != \(old) entries wanting .old")
      precondition(
        marked <= markedCount, "\(marked) removed entries but markedCount \(markedCount)")
      precondition(count <= capacity, "count \(count) exceeds capacity \(capacity)")
    }
  #endif

  private mutating func grow() {
    let newCapacity = capacity * 2
    let newBase = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
    newBase.moveInitialize(from: base, count: count)
    base.deallocate()
    base = newBase
    capacity = newCapacity
  }
}
