/// Turns the upstream changes of a derived observable with several inputs (`combineLatest`,
/// `flatMapLatest`) into its own values, glitch-free, and publishes them with
/// ``ReadOnlyObservable/send(_:)``. (An operator with one input needs none of this: see
/// `DerivedLink`.)
///
/// An upstream round does not recompute the value at once: it queues its event, tagged with the
/// delivering thread's propagation, and marks the pipeline stale there (see
/// `ObservationContext`). When the propagation ends, stale pipelines are recomputed lowest rank
/// first, so a pipeline runs only after every source that the same change affects has its new
/// value, and once per propagation: it folds that propagation's events and publishes the last
/// value they yield. A diamond (`a.combineLatest(a.map { … })`) therefore never publishes a pair
/// that never existed, and a transaction that sets two sources publishes once. Events of
/// different propagations (one per change, or one per thread when threads set at once) are
/// never merged: each yields its own value, in queue order, published only once its own
/// propagation has ended.
///
/// Recomputations are serialized: a pipeline made stale on two threads at once runs on one of
/// them, and again if events arrived meanwhile, so `reduce` (user code) is never called
/// concurrently with itself and may keep state without a lock, and publications follow the
/// order of the events. No lock is held while `reduce` or `send` runs.
///
/// The builder of the derived observable owns the pipeline until ``attach(_:)``: the `.initial`
/// values that arrive while it registers upstream are queued and folded into the seed, so the
/// seed is exactly what the registrations saw and no change is lost between them.
final class DerivedPipeline<Event, Output>: PropagationNode {
  let rank: Int
  private let lock = Lock()

  // Guarded by `lock`: the upstream events not yet folded, oldest first, each with the
  // propagation it belongs to. A ring over raw storage rather than an array of optionals: this
  // code runs unspecialized, and every `Optional<Event>` or `Array<…>` it touched cost a generic
  // metadata look-up (about 400 instructions each, a dozen per change).
  @exclusivity(unchecked) private var eventSlots: UnsafeMutablePointer<Event>
  @exclusivity(unchecked) private var eventTags: UnsafeMutablePointer<PropagationTag>
  @exclusivity(unchecked) private var eventCapacity = 2
  @exclusivity(unchecked) private var eventHead = 0
  @exclusivity(unchecked) private var eventCount = 0
  /// Propagations that have ended (or are being flushed): their events may be published. A
  /// short list (one entry per thread with events waiting), searched linearly.
  @exclusivity(unchecked) private var ended: [PropagationTag] = []
  /// Propagations in which the pipeline waits to be recomputed.
  @exclusivity(unchecked) private var scheduled: [PropagationTag] = []
  /// Set while the builder owns the pipeline, and while a recomputation runs.
  @exclusivity(unchecked) private var isRecomputing = true
  /// Set from `init` until ``attach(_:)``.
  @exclusivity(unchecked) private var isBuilding = true
  /// Written once by the builder while it owns the pipeline, read only by recomputations, which
  /// the lock orders after it.
  private weak var target: DerivedObservable<Output>?
  private let reduce: (Event, (Output) -> Void) -> Void
  /// The value being folded; only recomputations touch it, one at a time.
  private let folded = UnsafeMutablePointer<Output>.allocate(capacity: 1)

  /// - Parameters:
  ///   - rank: 1 + the highest rank among the sources.
  ///   - reduce: Folds one upstream event into the state and returns the value to publish, or
  ///     `nil` to publish nothing.
  init(rank: Int, reduce: @escaping (Event) -> Output?) {
    self.rank = rank
    self.reduce = { event, yield in
      if let value = reduce(event) { yield(value) }
    }
    eventSlots = .allocate(capacity: eventCapacity)
    eventTags = .allocate(capacity: eventCapacity)
  }

  deinit {
    for offset in 0..<eventCount { (eventSlots + slot(offset)).deinitialize(count: 1) }
    eventSlots.deallocate()
    eventTags.deallocate()
    folded.deallocate()
    lock.deallocate()
  }

  // MARK: - The event ring (lock held)

  @inline(__always)
  private func slot(_ offset: Int) -> Int {
    let index = eventHead + offset
    return index < eventCapacity ? index : index - eventCapacity
  }

  private func appendEvent(_ event: Event, _ propagation: PropagationTag) {
    if eventCount == eventCapacity { growEvents() }
    let index = slot(eventCount)
    (eventSlots + index).initialize(to: event)
    eventTags[index] = propagation
    eventCount += 1
  }

  @inline(never)
  private func growEvents() {
    let capacity = eventCapacity * 2
    let slots = UnsafeMutablePointer<Event>.allocate(capacity: capacity)
    let tags = UnsafeMutablePointer<PropagationTag>.allocate(capacity: capacity)
    for offset in 0..<eventCount {
      let index = slot(offset)
      (slots + offset).moveInitialize(from: eventSlots + index, count: 1)
      tags[offset] = eventTags[index]
    }
    eventSlots.deallocate()
    eventTags.deallocate()
    eventSlots = slots
    eventTags = tags
    eventCapacity = capacity
    eventHead = 0
  }

  /// Moves the oldest event out; the caller checked that there is one.
  private func popEvent() -> Event {
    let event = (eventSlots + eventHead).move()
    eventHead = slot(1)
    eventCount -= 1
    return event
  }

  private func hasEvent(of propagation: PropagationTag) -> Bool {
    for offset in 0..<eventCount where eventTags[slot(offset)] == propagation { return true }
    return false
  }

  // MARK: - Receiving and recomputing

  /// Queues an upstream event and marks the pipeline stale in this thread's propagation, unless
  /// it already waits in one (that recomputation will take this event too).
  func receive(_ event: Event) {
    let context = ObservationContext.current
    let propagation = context.currentPropagation
    lock.lock()
    appendEvent(event, propagation)
    let mustSchedule = !isBuilding && !scheduled.contains(propagation)
    if mustSchedule { scheduled.append(propagation) }
    lock.unlock()
    if mustSchedule { context.schedule(self) }
  }

  /// Builder only, before ``attach(_:)``: folds the queued events; returns the seed, or `nil`
  /// when none yields a value.
  func seed() -> Output? {
    var seed: Output?
    lock.lock()
    while eventCount > 0 {
      let event = popEvent()
      lock.unlock()
      reduce(event) { seed = $0 }
      lock.lock()
    }
    lock.unlock()
    return seed
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
      if !ended.contains(propagation) { ended.append(propagation) }
    }
    runLocked()
  }

  /// Recomputes from the events queued since the last run, unless a recomputation is running
  /// on another thread: that one runs again and takes them.
  func recompute(in context: ObservationContext) {
    let propagation = context.currentPropagation
    lock.lock()
    if let index = scheduled.firstIndex(of: propagation) { scheduled.removeUnordered(at: index) }
    if !ended.contains(propagation) { ended.append(propagation) }
    if isRecomputing {
      lock.unlock()
      return
    }
    isRecomputing = true
    runLocked()
  }

  /// Entered with the lock held and the pipeline's recomputation role; returns with the lock
  /// released. Publishes, in queue order, one value per ended propagation at the head of the
  /// queue; gives the role up at the first propagation that has not ended (its own thread
  /// recomputes it then).
  private func runLocked() {
    while eventCount > 0, ended.contains(eventTags[eventHead]) {
      let propagation = eventTags[eventHead]
      // Fold the propagation's events one at a time: `reduce` is user code and runs without the
      // lock. The value to publish is the last one they yield, kept in `folded`.
      var hasFolded = false
      repeat {
        let event = popEvent()
        lock.unlock()
        reduce(event) { value in
          if hasFolded {
            folded.pointee = value
          } else {
            folded.initialize(to: value)
            hasFolded = true
          }
        }
        lock.lock()
      } while eventCount > 0 && eventTags[eventHead] == propagation
      if !hasEvent(of: propagation), let index = ended.firstIndex(of: propagation) {
        ended.removeUnordered(at: index)
      }
      if hasFolded {
        lock.unlock()
        publishFolded()
        lock.lock()
      }
    }
    isRecomputing = false
    lock.unlock()
  }

  /// Publishes the value in `folded` and leaves the slot empty.
  private func publishFolded() {
    defer { folded.deinitialize(count: 1) }
    // A dead target means the derived observable is going away and its upstream registrations
    // with it; events that still arrive (from a round on another thread) are dropped.
    guard let target else { return }
    target.send(folded.pointee)
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
