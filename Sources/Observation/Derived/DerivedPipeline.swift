/// Turns the upstream changes of a derived observable with several inputs (`combineLatest`,
/// `flatMapLatest`) into its own values, glitch-free, and publishes them with
/// ``ReadOnlyObservable/send(_:)``. (An operator with one input needs none of this: see
/// `DerivedLink`.)
///
/// An upstream round does not recompute the value at once: it queues its event, tagged with the
/// delivering thread's propagation and the source that sent it, and marks the pipeline stale
/// there (see `ObservationContext`). When the propagation ends, stale pipelines are recomputed
/// lowest rank first, so a pipeline runs only after every source that the same change affects
/// has its new value, and once per propagation: it applies that propagation's events and
/// publishes the state they leave. A diamond (`a.combineLatest(a.map { … })`) therefore never
/// publishes a pair that never existed, and a transaction that sets two sources publishes once.
/// Events of different propagations (one per change, or one per thread when threads set at
/// once) are never merged: each yields its own value, in queue order, published only once its
/// own propagation has ended.
///
/// Another thread's events can land between two events of one propagation (its round was held
/// up between two paths of a diamond). Folding only consecutive events would then split the
/// propagation around them and publish a combination that never existed; instead a
/// propagation's later events are folded with its first, ahead of the other threads' events in
/// between. An event is moved forward only while it can be another path of the changes the fold
/// already holds; the fold stops at the first one that cannot: one whose source also sent one of
/// the events it would pass (moving past it would reorder that source's values), or one whose
/// source already has an event in the fold (a later change of that source, which may have been
/// made after the events it would pass: a set in a callback, or a backlog of another thread's
/// changes that this thread delivers). The rest of the propagation is published on its own,
/// after the events it did not pass. (A set in a callback of a source not yet in the fold is
/// still folded with it, as part of its thread's propagation.)
///
/// A `flatMapLatest` that switches to an observable ranked above it rises above it (see
/// `DerivedRank`); in the middle of a propagation the observable it switched to may not have
/// been recomputed yet. The pipeline then holds its value back and waits in the same
/// propagation at its new rank, so it publishes once, after that observable (see
/// ``holdBackPublication()``).
///
/// Recomputations are serialized: a pipeline made stale on two threads at once runs on one of
/// them, and again if events arrived meanwhile, so `apply` and `current` (which may call user
/// code) are never called concurrently with themselves and may keep state without a lock, and
/// publications follow the order of the events. No lock is held while `apply`, `current` or
/// `send` runs.
///
/// The builder of the derived observable owns the pipeline until ``attach(_:)``: the `.initial`
/// values that arrive while it registers upstream are queued and folded into the seed, so the
/// seed is exactly what the registrations saw and no change is lost between them.
final class DerivedPipeline<Event, Output>: PropagationNode {
  /// The rank, shared with the derived observable.
  let ranking: DerivedRank
  private let lock = Lock()

  // Guarded by `lock`: the upstream events not yet applied, oldest first, each with the
  // propagation it belongs to and the source that sent it. A ring over raw storage rather than
  // an array of optionals: this code runs unspecialized, and every `Optional<Event>` or
  // `Array<…>` it touches costs a generic metadata look-up, several per change.
  @exclusivity(unchecked) private var eventSlots: UnsafeMutablePointer<Event>
  @exclusivity(unchecked) private var eventTags: UnsafeMutablePointer<PropagationTag>
  @exclusivity(unchecked) private var eventSources: UnsafeMutablePointer<ObjectIdentifier>
  @exclusivity(unchecked) private var eventCapacity = 2
  @exclusivity(unchecked) private var eventHead = 0
  @exclusivity(unchecked) private var eventCount = 0
  /// How many events each propagation has in the ring, so that whether one has events left, or
  /// more than its first run, costs no scan of a backlog.
  @exclusivity(unchecked) private var eventCounts = PropagationCounts()
  /// Propagations with events in the ring that have ended (or are being flushed), counted once:
  /// their events may be published. Behind a propagation that is still running, many may wait.
  @exclusivity(unchecked) private var ended = PropagationCounts()
  /// Propagations in which the pipeline waits to be recomputed.
  @exclusivity(unchecked) private var scheduled: [PropagationTag] = []
  /// Set while the builder owns the pipeline, and while a recomputation runs (or is held back).
  @exclusivity(unchecked) private var isRecomputing = true
  /// Set from `init` until ``attach(_:)``.
  @exclusivity(unchecked) private var isBuilding = true
  /// The propagation whose publication is held back (see ``holdBackPublication()``); the
  /// thread flushing it keeps the recomputation role until it runs the pipeline again.
  @exclusivity(unchecked) private var heldBack: PropagationTag?
  /// The sources of the events the held-back value took from the switch on, for the gathering
  /// that completes it (see ``gatherEvents(of:folded:)``); only the recomputation touches it.
  @exclusivity(unchecked) private var heldBackSources: [ObjectIdentifier] = []
  /// Set by ``holdBackPublication()`` during an `apply`; only the recomputation touches it.
  @exclusivity(unchecked) private var mustHoldBack = false
  /// Written once by the builder while it owns the pipeline, read only by recomputations, which
  /// the lock orders after it.
  private weak var target: DerivedObservable<Output>?
  private let apply: (Event) -> Bool
  private let current: () -> Output

  /// - Parameters:
  ///   - ranking: The rank of the derived observable, above its sources'.
  ///   - apply: Records one upstream event in the operator's state; returns whether the state
  ///     now has a value to publish.
  ///   - current: The value to publish, from the state, once `apply` has returned `true`.
  init(
    ranking: DerivedRank,
    apply: @escaping (Event) -> Bool,
    current: @escaping () -> Output
  ) {
    self.ranking = ranking
    self.apply = apply
    self.current = current
    eventSlots = .allocate(capacity: eventCapacity)
    eventTags = .allocate(capacity: eventCapacity)
    eventSources = .allocate(capacity: eventCapacity)
  }

  deinit {
    for offset in 0..<eventCount { (eventSlots + slot(offset)).deinitialize(count: 1) }
    eventSlots.deallocate()
    eventTags.deallocate()
    eventSources.deallocate()
    lock.deallocate()
  }

  var rank: Int { ranking.value }

  // MARK: - The event ring (lock held)

  @inline(__always)
  private func slot(_ offset: Int) -> Int {
    let index = eventHead + offset
    return index < eventCapacity ? index : index - eventCapacity
  }

  private func appendEvent(
    _ event: Event, _ propagation: PropagationTag, _ source: ObjectIdentifier
  ) {
    if eventCount == eventCapacity { growEvents() }
    let index = slot(eventCount)
    (eventSlots + index).initialize(to: event)
    eventTags[index] = propagation
    eventSources[index] = source
    eventCount += 1
    eventCounts.increment(propagation)
  }

  @inline(never)
  private func growEvents() {
    reorderEvents(capacity: eventCapacity * 2) { _ in true }
  }

  /// Moves the events into new storage of `capacity`: first those `isFirst` accepts, then the
  /// others, each group in queue order.
  private func reorderEvents(capacity: Int, _ isFirst: (Int) -> Bool) {
    let slots = UnsafeMutablePointer<Event>.allocate(capacity: capacity)
    let tags = UnsafeMutablePointer<PropagationTag>.allocate(capacity: capacity)
    let sources = UnsafeMutablePointer<ObjectIdentifier>.allocate(capacity: capacity)
    var moved = 0
    for pass in [true, false] {
      for offset in 0..<eventCount where isFirst(offset) == pass {
        let index = slot(offset)
        (slots + moved).moveInitialize(from: eventSlots + index, count: 1)
        tags[moved] = eventTags[index]
        sources[moved] = eventSources[index]
        moved += 1
      }
    }
    eventSlots.deallocate()
    eventTags.deallocate()
    eventSources.deallocate()
    eventSlots = slots
    eventTags = tags
    eventSources = sources
    eventCapacity = capacity
    eventHead = 0
  }

  /// Moves the oldest event out; the caller checked that there is one.
  private func popEvent() -> Event {
    eventCounts.decrement(eventTags[eventHead])
    let event = (eventSlots + eventHead).move()
    eventHead = slot(1)
    eventCount -= 1
    return event
  }

  private func hasEvent(of propagation: PropagationTag) -> Bool {
    eventCounts[propagation] > 0
  }

  /// Brings the events of `propagation` that another propagation's events separate from the
  /// head up behind its first ones, so that one fold takes them, in their order. It stops at the
  /// first one that would pass an event of its own source, or whose source already has an event
  /// in the fold (see the type's documentation); that one and the rest stay where they are.
  ///
  /// - Parameters:
  ///   - propagation: The propagation about to be folded.
  ///   - folded: Sources of events the fold has already applied (a held-back value's).
  private func gatherEvents(of propagation: PropagationTag, folded: [ObjectIdentifier] = []) {
    // The common case, one propagation at a time: nothing to move.
    var offset = 0
    while offset < eventCount && eventTags[slot(offset)] == propagation { offset += 1 }
    let firstOther = offset
    let later = eventCounts[propagation] - firstOther
    guard later > 0 else { return }
    var folded = folded
    for index in 0..<firstOther where !folded.contains(eventSources[slot(index)]) {
      folded.append(eventSources[slot(index)])
    }
    var passed: [ObjectIdentifier] = []
    var isGathered: [Bool] = []
    var found = 0
    // Up to the last of the propagation's later events, no further.
    for index in firstOther..<eventCount where found < later {
      let source = eventSources[slot(index)]
      if eventTags[slot(index)] != propagation {
        if !passed.contains(source) { passed.append(source) }
        continue
      }
      found += 1
      if passed.contains(source) || folded.contains(source) { break }
      folded.append(source)
      if isGathered.isEmpty { isGathered = Array(repeating: false, count: eventCount) }
      isGathered[index] = true
    }
    guard !isGathered.isEmpty else { return }
    reorderEvents(capacity: eventCapacity) { $0 < firstOther || isGathered[$0] }
  }

  // MARK: - Receiving and recomputing

  /// Queues an upstream event from `source` and marks the pipeline stale in this thread's
  /// propagation, unless it already waits in one (that recomputation will take this event too).
  func receive(_ event: Event, from source: ObjectIdentifier) {
    let context = ObservationContext.current
    let propagation = context.currentPropagation
    lock.lock()
    appendEvent(event, propagation, source)
    let mustSchedule = !isBuilding && !scheduled.contains(propagation)
    if mustSchedule { scheduled.append(propagation) }
    lock.unlock()
    if mustSchedule { context.schedule(self) }
  }

  /// Builder only, before ``attach(_:)``: applies the queued events; returns the seed, or `nil`
  /// when they leave no value to publish.
  func seed() -> Output? {
    var hasValue = false
    lock.lock()
    while eventCount > 0 {
      let event = popEvent()
      lock.unlock()
      if apply(event) { hasValue = true }
      lock.lock()
    }
    lock.unlock()
    // A switch during the build raised the rank before the derived observable took it.
    mustHoldBack = false
    return hasValue ? current() : nil
  }

  /// Builder only: connects the derived observable, publishes whatever arrived after the seed,
  /// and gives up the pipeline.
  func attach(_ derived: DerivedObservable<Output>) {
    target = derived
    lock.lock()
    isBuilding = false
    // What arrived from other threads while the builder registered is published now.
    for offset in 0..<eventCount {
      let propagation = eventTags[slot(offset)]
      if ended[propagation] == 0 { ended.increment(propagation) }
    }
    runLocked(in: nil, holdingBack: false)
  }

  /// Recomputes from the events queued since the last run, unless a recomputation is running
  /// on another thread: that one runs again and takes them.
  func recompute(in context: ObservationContext) {
    let propagation = context.currentPropagation
    lock.lock()
    if let index = scheduled.firstIndex(of: propagation) { scheduled.removeUnordered(at: index) }
    // A propagation whose events are all published has nothing left to end.
    if hasEvent(of: propagation) && ended[propagation] == 0 { ended.increment(propagation) }
    if isRecomputing {
      guard heldBack == propagation else {
        lock.unlock()
        return
      }
      // This thread held the publication back and kept the role: it publishes now.
      heldBack = nil
      runLocked(in: context, holdingBack: true)
      return
    }
    isRecomputing = true
    runLocked(in: context, holdingBack: false)
  }

  /// Called by `apply` (on the recomputation) when a switch raised the rank: the observable
  /// switched to may not have been recomputed yet in this propagation, so the pipeline waits
  /// for it, at its new rank, before it publishes.
  func holdBackPublication() {
    mustHoldBack = true
  }

  /// Entered with the lock held and the pipeline's recomputation role; returns with the lock
  /// released. Publishes, in queue order, one value per ended propagation at the head of the
  /// queue; gives the role up at the first propagation that has not ended (its own thread
  /// recomputes it then).
  ///
  /// - Parameters:
  ///   - context: The calling thread's context while it flushes; `nil` for the builder.
  ///   - holdingBack: Whether the state already holds the value of the calling thread's
  ///     propagation, held back from an earlier run.
  private func runLocked(in context: ObservationContext?, holdingBack: Bool) {
    var hasHeldValue = holdingBack
    while true {
      let propagation: PropagationTag
      // The sources this fold takes once a switch has asked to hold its value back (and those
      // the held-back value took).
      var switchedSources: [ObjectIdentifier] = []
      if hasHeldValue, let context {
        // A held-back value belongs to the calling thread's propagation.
        propagation = context.currentPropagation
        swap(&switchedSources, &heldBackSources)
        gatherEvents(of: propagation, folded: switchedSources)
      } else if let next = nextPropagationLocked() {
        propagation = next
      } else {
        break
      }
      // Apply the propagation's events one at a time: `apply` may run user code and runs
      // without the lock.
      var hasValue = hasHeldValue
      hasHeldValue = false
      while eventCount > 0 && eventTags[eventHead] == propagation {
        let source = eventSources[eventHead]
        let event = popEvent()
        lock.unlock()
        if apply(event) { hasValue = true }
        lock.lock()
        if mustHoldBack && !switchedSources.contains(source) { switchedSources.append(source) }
      }
      if !hasEvent(of: propagation) { ended.removeAll(of: propagation) }
      if mustHoldBack {
        mustHoldBack = false
        if let context, hasValue, propagation == context.currentPropagation {
          // Keep the role and the value; run again in this flush at the new rank.
          heldBack = propagation
          heldBackSources = switchedSources
          let mustSchedule = !scheduled.contains(propagation)
          if mustSchedule { scheduled.append(propagation) }
          lock.unlock()
          if mustSchedule { context.schedule(self) }
          return
        }
      }
      if hasValue {
        lock.unlock()
        publish(current())
        lock.lock()
      }
    }
    isRecomputing = false
    lock.unlock()
  }

  /// The propagation to fold next, with its later events gathered behind its first (see
  /// ``gatherEvents(of:)``), or `nil` when the head's propagation has not ended (its own thread
  /// folds it, and what follows it, when it ends).
  ///
  /// An ended propagation never goes ahead of one that is still running: that one's change was
  /// stored first, so publishing the later one without it would show a state that never
  /// existed.
  private func nextPropagationLocked() -> PropagationTag? {
    guard eventCount > 0, ended[eventTags[eventHead]] > 0 else { return nil }
    let head = eventTags[eventHead]
    gatherEvents(of: head)
    return head
  }

  private func publish(_ value: Output) {
    // A dead target means the derived observable is going away and its upstream registrations
    // with it; events that still arrive (from a round on another thread) are dropped.
    guard let target else { return }
    target.send(value)
  }
}

extension Array {
  /// Removes the element at `index` by moving the last one into its place: O(1), for lists whose
  /// order does not matter.
  fileprivate mutating func removeUnordered(at index: Int) {
    if index != count - 1 { swapAt(index, count - 1) }
    removeLast()
  }
}
