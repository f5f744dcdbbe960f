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
/// The slots past the last entry hold vacant entries (removed, with a shared closure that does
/// nothing) rather than uninitialized memory, so that appending fills a slot field by field
/// instead of copying a whole entry through its generic value witnesses. Only the slots below
/// `initializedEnd` are made vacant, a few pages at a time as appends reach them: making a whole
/// grown buffer vacant at once wrote memory that a list may never use (a quarter of the buffer
/// at 100 000 registrations) and faulted its pages in early. Registering 10 000 owners took
/// 93 ns each that way, and takes 86 ns this way.
///
/// Compaction moves entries and writes the new slots into their tokens, so the list's owner must
/// apply every pending removal of a token before anything that may compact (an append or a
/// removal): a token whose removal is still pending may already be deallocated.
///
/// Not thread-safe: ``Observable`` guards it with its lock and its delivering-thread rule.
/// Noncopyable: it owns its buffer and its owner index, which ``deallocate()`` frees once.
struct ObserverList<Value>: ~Copyable {
  typealias Entry = ObserverEntry<Value>

  private(set) var base: UnsafeMutablePointer<Entry>
  // `count` and `oldCount`, which every round reads, are words; the other counts are stored in
  // 32 bits, in pairs, since every observed observable's delivery storage holds them. A list of
  // 2³² slots stops at a precondition when its capacity is written.
  private(set) var count = 0
  private var storedCapacity: UInt32
  private var storedInitializedEnd: UInt32 = 0
  /// How many kept entries want `.old`, so a round with none skips that pass.
  private(set) var oldCount = 0
  private var storedMarkedCount: UInt32 = 0
  /// How many times a full buffer was sampled for dead owners: moves the next sample.
  private var samplings: UInt32 = 0

  private var capacity: Int {
    @inline(__always) get { Int(storedCapacity) }
    @inline(__always) set { storedCapacity = UInt32(newValue) }
  }
  /// The slots below it are initialized (entries, then vacant slots); the rest are not.
  private var initializedEnd: Int {
    @inline(__always) get { Int(storedInitializedEnd) }
    @inline(__always) set { storedInitializedEnd = UInt32(newValue) }
  }
  /// How many entries are marked removed but still in the buffer.
  private(set) var markedCount: Int {
    @inline(__always) get { Int(storedMarkedCount) }
    @inline(__always) set { storedMarkedCount = UInt32(newValue) }
  }

  /// The owner index and its counts (see ``OwnerBook``), made on the first removal by owner (a
  /// `removeIfExists` or a `removeObserver`) and kept up to date from then on. A list that is
  /// only ever appended to, like one of a hundred thousand `removeIfExists: false`
  /// registrations, or one of tokens only, like every level of a derived chain, pays nothing
  /// for it but this reference.
  private var book: OwnerBook?
  /// Whether the owner index is built.
  @inline(__always) private var isIndexing: Bool { book != nil }
  /// Live `addObserver` entries that are not in the index (none while it is not built).
  @inline(__always) private var unindexedReplaceable: Int {
    isIndexing ? withBook { $0.unindexedReplaceable } : 0
  }

  /// Calls `body` with the book, which must exist, without retaining it: the list holds it
  /// until ``deallocate()``, and a retain and a release would cost a registration more than its
  /// index probe.
  @inline(__always)
  private func withBook<Result>(_ body: (OwnerBook) -> Result) -> Result {
    Unmanaged.passUnretained(book.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
  }

  /// The closure of vacant slots and of removed entries, made the first time one needs it (see
  /// ``vacantCallback()``): one per list, since a closure literal in this generic code allocates
  /// its context each time it is evaluated.
  private var madeVacantCallback = MadeCallback<Value>.none

  /// An empty list: a buffer of one slot, left uninitialized until the first append, which
  /// initializes it with its own closure (see ``makeRoom(released:placeholder:)``).
  init() {
    storedCapacity = 1
    base = .mallocate(capacity: 1)
  }

  /// Deinitializes every slot and frees the buffer; the list must not be used afterwards.
  mutating func deallocate() {
    // The owning observable is in its deinit: no lock is held.
    base.deinitialize(count: initializedEnd)
    base.freeMallocated()
    book = nil
    count = 0
  }

  typealias Callback = (Value, ObservableOptions) -> Void

  /// The closure of vacant slots and removed entries, made now if nobody made it yet: a list
  /// whose one registration stays, like every level of a derived chain, never allocates it.
  // Inlined: a call on the list from unspecialized code looks the list type's metadata up.
  @inline(__always)
  mutating func vacantCallback() -> Callback {
    if case .made(let callback) = madeVacantCallback { return callback }
    return makeVacantCallback()
  }

  @inline(never)
  private mutating func makeVacantCallback() -> Callback {
    let callback: Callback = { _, _ in }
    madeVacantCallback = .made(callback)
    return callback
  }

  /// Initializes the uninitialized slots `range` as vacant.
  private mutating func makeVacant(_ range: Range<Int>) {
    guard !range.isEmpty else { return }
    (base + range.lowerBound).initialize(
      repeating: Entry(vacant: vacantCallback()), count: range.count)
  }

  /// Makes the next uninitialized slots vacant: up to 256 (8 KiB of 32-byte entries), so that
  /// memory is first written when appends are about to use it.
  private mutating func extendVacantSlots() {
    let end = min(capacity, initializedEnd + 256)
    makeVacant(initializedEnd..<end)
    initializedEnd = end
  }

  /// Takes the closure out of the removed entry at `index`, leaving the vacant one, so that it
  /// can be released after unlocking. Only safe while no round runs, or for an entry the round
  /// has passed: a round may be executing this very closure.
  @inline(__always)
  mutating func takeCallback(at index: Int) -> Callback {
    assert((base + index).pointee.isRemoved, "A closure was taken from a live entry.")
    return (base + index).pointee.takeCallback(leaving: vacantCallback())
  }

  /// Appends `draft`'s entry, making room first (see ``makeRoom(released:placeholder:)``).
  // Inlined into its callers: a call on the list from unspecialized code looks the list type's
  // generic metadata up first (hundreds of instructions, most of a registration's cost).
  @inline(__always)
  mutating func append(_ draft: Entry.Draft, released: inout [Callback]) {
    if count == initializedEnd { makeRoom(released: &released, placeholder: draft.callback) }
    appendAssumingRoom(draft)
  }

  /// Appends an entry that waited in a queue, copied as it is: its owner is never loaded, so
  /// no strong reference to it is made and dropped under the caller's lock (the last one's
  /// release would run the owner's deinit there).
  mutating func append(_ entry: Entry, released: inout [Callback]) {
    if count == initializedEnd { makeRoom(released: &released, placeholder: entry.callback) }
    (base + count).pointee = entry
    didAppend()
  }

  /// Makes room for an append when every vacant slot is used: more vacant slots, while the
  /// buffer has uninitialized ones. In a full buffer, removed entries and, if a sample finds
  /// any, entries of dead owners are dropped (so a list that sees registrations but no sets
  /// stays bounded by its live observers), and the buffer grows if that left it more than three
  /// quarters full. The dropped closures go to `released`.
  ///
  /// A fresh list's first slot is initialized as a vacant entry holding `placeholder`, the
  /// appended entry's own closure, which the append then writes again: the list makes its
  /// shared vacant closure only once it needs a second slot or removes an entry.
  private mutating func makeRoom(
    released: inout [Callback], placeholder: @escaping Callback
  ) {
    if initializedEnd == 0 {
      base.initialize(to: Entry(vacant: placeholder))
      initializedEnd = 1
      return
    }
    if initializedEnd < capacity {
      extendVacantSlots()
      return
    }
    if sampleFindsDeadOwner() {
      compact(released: &released)
    } else if markedCount > 0 {
      removeMarked(released: &released)
    }
    if count * 4 >= capacity * 3 { grow() }
    if count == initializedEnd { extendVacantSlots() }
  }

  /// Whether one of a few entries spread over the list belongs to a dead owner. A full buffer
  /// is compacted (a weak load per entry, touching every owner) only then, so that filling a
  /// list of living owners does not load every owner again at each growth. A list where a
  /// quarter of the entries are dead escapes the 16 samples once in a hundred growths, and the
  /// samples move at each one.
  private mutating func sampleFindsDeadOwner() -> Bool {
    samplings &+= 1
    let sampleCount = min(count, 16)
    guard sampleCount > 0 else { return false }
    // Odd, so that the samples fall on both even and odd slots (every other owner dying is the
    // regular pattern an even spacing would miss), and still within the list.
    let spacing = max(1, count / sampleCount - 1) | 1
    let start = Int(samplings &* 7) % spacing
    for sample in 0..<sampleCount where Self.isDead(base + start + sample * spacing) {
      return true
    }
    return false
  }

  /// Reserves the next slot in the owner index for a replacing (`addObserver`) registration of
  /// the owner `identity`, if that owner has no `addObserver` entry to replace; the caller then
  /// appends its entry with ``appendAssumingRoom(_:indexed:)``, `indexed: true`. Returns false,
  /// changing nothing, when the owner has such an entry (see
  /// ``replaceableSlot(ofOwner:)``) or the registration must take the general
  /// path: no vacant slot is ready, the index is not built yet, or `addObserver` entries outside it
  /// could match. One probe of the index both looks the owner up and records the new slot.
  @inline(__always)
  mutating func reserveIndexedSlot(for identity: UInt) -> Bool {
    canReserveIndexedSlot && indexIfAbsent(identity, at: count)
  }

  /// Whether a replacing registration may reserve its slot in the owner index: a vacant slot is
  /// ready, and the index is built and covers every `addObserver` entry.
  @inline(__always)
  private var canReserveIndexedSlot: Bool {
    hasRoom && isIndexing && unindexedReplaceable == 0
  }

  /// The slot of the owner `identity`'s one `addObserver` entry, when a replacing registration
  /// may replace it on the fast path (see ``replaceEntry(at:ofOwner:)``): under the conditions of
  /// ``reserveIndexedSlot(for:)``, and unless the removal would leave half the buffer marked (the
  /// general path compacts then). Only while no round runs: a round may be calling the entry's
  /// closure.
  ///
  /// Replacing an owner's registration is common (a view re-registering as it reappears, a new
  /// owner at a dead one's address). The general path pays for a list of released closures,
  /// and an optional closure or a call on the list would each pay a generic metadata look-up in
  /// this unspecialized code, so the two steps are inlined and return plain values.
  @inline(__always)
  func replaceableSlot(ofOwner identity: UInt) -> Int? {
    guard canReserveIndexedSlot, (markedCount + 1) * 2 < count else { return nil }
    return indexedSlot(ofOwner: identity)
  }

  /// Marks the entry at `slot`, which ``replaceableSlot(ofOwner:)`` returned, removed, records
  /// the next slot as the owner's in the index, and returns the entry's closure, for the caller
  /// to release after unlocking. The caller then appends the new entry with
  /// ``appendAssumingRoom(_:indexed:)``, `indexed: true`.
  @inline(__always)
  mutating func replaceEntry(at slot: Int, ofOwner identity: UInt) -> Callback {
    markRemoved(at: slot)
    let replaced = takeCallback(at: slot)
    // Its only `addObserver` entry is gone (every other one would be in the index, or counted
    // in `unindexedReplaceable`), so this cannot fail.
    let added = indexIfAbsent(identity, at: count)
    assert(added, "The owner still had an indexed entry after its only one was removed.")
    return replaced
  }

  /// Maps the owner `identity` to `slot` in the owner index unless it is mapped; returns
  /// whether it was added. The index confirms a matching tag against the entry it points at.
  @inline(__always)
  private mutating func indexIfAbsent(_ identity: UInt, at slot: Int) -> Bool {
    let base = base
    return withBook {
      $0.slots.insertIfAbsent(identity, slot: slot) { (base + $0).pointee.identity }
    }
  }

  /// The slot of the owner `identity`'s indexed `addObserver` entry, if the index has one.
  @inline(__always)
  private func indexedSlot(ofOwner identity: UInt) -> Int? {
    let base = base
    return withBook { $0.slots.slot(of: identity) { (base + $0).pointee.identity } }
  }

  /// Whether ``appendAssumingRoom(_:)`` may be called: a vacant slot follows the last entry.
  @inline(__always) var hasRoom: Bool { count < initializedEnd }

  /// Appends `draft`'s entry to a buffer that ``hasRoom``; `indexed` when
  /// ``reserveIndexedSlot(for:)`` or ``replaceEntry(at:ofOwner:)`` has already
  /// recorded it in the owner index.
  @inline(__always)
  mutating func appendAssumingRoom(_ draft: consuming Entry.Draft, indexed: Bool = false) {
    (base + count).pointee.fill(with: draft)
    didAppend(indexed: indexed)
  }

  /// Counts and indexes the entry just written at `count`.
  @inline(__always)
  private mutating func didAppend(indexed: Bool = false) {
    let entry = base + count
    switch entry.pointee.kindBits {
    case Entry.tokenKind:
      ObservationToken.setSlotHint(count, forIdentity: entry.pointee.identity)
    case Entry.replaceableKind:
      if !indexed, let book, !indexIfAbsent(entry.pointee.identity, at: count) {
        book.unindexedReplaceable += 1
      }
    default:
      book?.ownedAndHandles += 1
    }
    count += 1
    if entry.pointee.wantsOld { oldCount += 1 }
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
    slotHint: Int? = nil,
    released: inout [Callback],
    taking: Bool,
    compacting: Bool = true
  ) -> Bool {
    if case .handle = selection {} else { buildIndexIfNeeded() }
    var found = false
    // Read here, not in `take`: making it there would cost `take` a metadata look-up per call.
    let vacant = vacantCallback()
    func take(_ index: Int) {
      markRemoved(at: index)
      if taking { released.append((base + index).pointee.takeCallback(leaving: vacant)) }
      found = true
    }
    if let index = indexedSlot(of: selection, hint: slotHint) { take(index) }
    if !found || !selection.isUnique, mustScan(for: selection) {
      for index in 0..<count
      where !(base + index).pointee.isRemoved && Entry.isSelected(base + index, by: selection) {
        take(index)
        if selection.isUnique { break }
      }
    }
    if found && taking && compacting { removeMarkedIfWorthIt(released: &released) }
    return found
  }

  /// Indexes the live entries, the first time a removal by owner needs it.
  private mutating func buildIndexIfNeeded() {
    guard book == nil else { return }
    let book = OwnerBook()
    self.book = book
    // Kinds compared as bits, as in `markRemoved(at:)`: the generic `Kind` enum would cost a
    // metadata look-up per entry here.
    for index in 0..<count where !(base + index).pointee.isRemoved {
      switch (base + index).pointee.kindBits {
      case Entry.tokenKind: break
      case Entry.replaceableKind:
        if !indexIfAbsent((base + index).pointee.identity, at: index) {
          book.unindexedReplaceable += 1
        }
      default: book.ownedAndHandles += 1
      }
    }
  }

  /// The slot the index or the token's hint gives for `selection`, if it holds a live match.
  private func indexedSlot(of selection: Selection, hint: Int?) -> Int? {
    let candidate: Int?
    switch selection {
    case .handle: candidate = hint
    case .owner(let identity), .replaceable(let identity):
      candidate = indexedSlot(ofOwner: identity)
    }
    guard let index = candidate, index >= 0, index < count, !(base + index).pointee.isRemoved,
      Entry.isSelected(base + index, by: selection)
    else { return nil }
    return index
  }

  /// Whether entries that the index does not cover may match `selection`.
  private func mustScan(for selection: Selection) -> Bool {
    switch selection {
    case .handle: true
    case .replaceable: unindexedReplaceable > 0
    case .owner: unindexedReplaceable > 0 || (book?.ownedAndHandles ?? 0) > 0
    }
  }

  mutating func markRemoved(at index: Int) {
    // Read in place, and kinds compared as bits: a copy of the entry, or the generic `Kind`
    // enum, costs a metadata look-up in this unspecialized code.
    let entry = base + index
    if entry.pointee.wantsOld { oldCount -= 1 }
    if let book {
      switch entry.pointee.kindBits {
      case Entry.tokenKind: break
      case Entry.replaceableKind:
        if !book.slots.removeSlot(index, of: entry.pointee.identity) {
          book.unindexedReplaceable -= 1
        }
      default:
        book.ownedAndHandles -= 1
      }
    }
    entry.pointee.markRemoved()
    markedCount += 1
  }

  /// Drops the marked entries once they are at least half of the buffer: removing them one at a
  /// time would move the whole tail on every removal, making mass removal quadratic. Entries a
  /// round marked still hold their closures: those go to `released`.
  mutating func removeMarkedIfWorthIt(released: inout [Callback]) {
    if markedCount * 2 >= count { removeMarked(released: &released) }
  }

  /// Removes, in place and keeping order, the entries marked removed, moving any closure they
  /// still hold to `released`. Each run of removed entries is deinitialized with one call and
  /// each run of kept entries moves with one bulk move (a memmove where entries are
  /// bitwise-takable): in this unspecialized code every call on the generic entry type costs a
  /// metadata look-up, and moving entries one by one through a predicate cost ~60 ns each,
  /// which made releasing n tokens one by one take seconds for n = 5000.
  mutating func removeMarked(released: inout [Callback]) {
    var index = 0
    while index < count && !(base + index).pointee.isRemoved { index += 1 }
    var kept = index
    while index < count {
      var end = index
      while end < count && (base + end).pointee.isRemoved {
        // A replaced or cancelled entry's closure was taken already: nothing to release.
        if (base + end).pointee.holdsCallback { released.append(takeCallback(at: end)) }
        end += 1
      }
      (base + index).deinitialize(count: end - index)
      index = end
      while end < count && !(base + end).pointee.isRemoved { end += 1 }
      guard end > index else { break }
      (base + kept).moveInitialize(from: base + index, count: end - index)
      for moved in kept..<(kept + end - index) {
        entryDidMove(to: moved, from: moved + index - kept)
      }
      kept += end - index
      index = end
    }
    makeVacant(kept..<count)
    count = kept
    markedCount = 0
  }

  /// Keeps the index and the tokens' hints pointing at an entry that compaction moved.
  private mutating func entryDidMove(to newIndex: Int, from oldIndex: Int) {
    // Read in place: a copy of the entry would go through its generic value witnesses.
    let entry = base + newIndex
    switch entry.pointee.kindBits {
    case Entry.tokenKind:
      ObservationToken.setSlotHint(newIndex, forIdentity: entry.pointee.identity)
    case Entry.replaceableKind:
      book?.slots.moveSlot(of: entry.pointee.identity, from: oldIndex, to: newIndex)
    default:
      break
    }
  }

  /// Drops removed entries and entries whose owner is gone, moving their closures to `released`.
  mutating func compact(released: inout [Callback]) {
    let start = base
    for index in 0..<count where Self.isDead(start + index) { markRemoved(at: index) }
    removeMarked(released: &released)
  }

  /// Whether the entry at `entry` is kept but its owner is gone. Reads the entry in place: an
  /// accessor called on `base[index]` copied the entry through its generic value witnesses,
  /// after a metadata look-up, on every iteration.
  @inline(__always)
  private static func isDead(_ entry: UnsafeMutablePointer<Entry>) -> Bool {
    !entry.pointee.isRemoved && !entry.pointee.isToken && entry.pointee.owner == nil
  }

  /// The number of entries that can still be called. Costs a weak load per owner entry.
  var liveCount: Int {
    var live = 0
    for index in 0..<count where (base + index).pointee.isLive { live += 1 }
    return live
  }

  #if DEBUG
    /// Stops the program if the counters disagree with the entries.
    func _checkInvariants() {
      var old = 0
      var marked = 0
      for index in 0..<count {
        if (base + index).pointee.wantsOld { old += 1 }
        if (base + index).pointee.isRemoved { marked += 1 }
      }
      precondition(old == oldCount, "oldCount \(oldCount) != \(old) entries wanting .old")
      guard let book else { return }
      var replaceable = 0
      var others = 0
      for index in 0..<count where !(base + index).pointee.isRemoved {
        switch (base + index).pointee.kind {
        case .token: break
        case .replaceable:
          if indexedSlot(ofOwner: (base + index).pointee.identity) != index { replaceable += 1 }
        case .owned, .handle: others += 1
        }
      }
      for index in book.slots.slots {
        precondition(
          index < count && !(base + index).pointee.isRemoved
            && (base + index).pointee.kindBits == Entry.replaceableKind
            && indexedSlot(ofOwner: (base + index).pointee.identity) == index,
          "the owner index points at slot \(index), which is not that owner's entry")
      }
      precondition(replaceable == book.unindexedReplaceable, "unindexed count is off")
      precondition(others == book.ownedAndHandles, "owned and handle count is off")
      precondition(
        marked <= markedCount, "\(marked) removed entries but markedCount \(markedCount)")
      precondition(
        count <= initializedEnd && initializedEnd <= capacity,
        "count \(count), initialized \(initializedEnd) and capacity \(capacity) are out of order")
    }
  #endif

  private mutating func grow() {
    let newCapacity = capacity * 2
    let newBase = UnsafeMutablePointer<Entry>.mallocate(capacity: newCapacity)
    newBase.moveInitialize(from: base, count: initializedEnd)
    base.freeMallocated()
    base = newBase
    capacity = newCapacity
  }
}

/// What an ``ObserverList`` keeps once a removal by owner needs it: where each owner's
/// `addObserver` entry is (its first one, when it has several), so that replacing and removing
/// an owner's registrations is O(1) instead of a scan, and the entries the index does not cover,
/// counted, so that a removal scans only when some could match.
///
/// A class of its own, made only then: its fields would otherwise make the delivery storage of
/// every observed observable 40 bytes larger. Guarded like its list: by the observable's lock
/// and its delivering-thread rule, which dynamic exclusivity checks cannot see.
private final class OwnerBook {
  @exclusivity(unchecked) var slots = OwnerIndex()
  /// Live `addObserver` entries that are not in `slots`.
  @exclusivity(unchecked) var unindexedReplaceable = 0
  /// Live `observe(with:)` and binding entries (never indexed).
  @exclusivity(unchecked) var ownedAndHandles = 0

  deinit {
    slots.deallocate()
  }
}

/// A list's vacant closure once made, or none yet. Not `Optional`: unwrapping an optional
/// function in unspecialized code needs a reabstraction thunk, allocated each time; this enum's
/// payload keeps the function's own representation. Not nested in the noncopyable list, whose
/// nested types cost a metadata look-up at each use.
private enum MadeCallback<Value> {
  case none
  case made((Value, ObservableOptions) -> Void)
}
