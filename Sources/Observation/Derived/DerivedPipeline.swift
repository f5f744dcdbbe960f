/// Turns the upstream changes of a derived observable into its own values, glitch-free, and
/// publishes them with ``ReadOnlyObservable/send(_:)``.
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
  private struct Queued {
    let event: Event
    let propagation: PropagationTag
  }

  // Guarded by `lock`.
  @exclusivity(unchecked) private var events = WorkQueue<Queued>()
  /// Propagations that have ended (or are being flushed): their events may be published.
  @exclusivity(unchecked) private var ended: Set<PropagationTag> = []
  /// Propagations in which the pipeline waits to be recomputed.
  @exclusivity(unchecked) private var scheduled: Set<PropagationTag> = []
  /// Set while the builder owns the pipeline, and while a recomputation runs.
  @exclusivity(unchecked) private var isRecomputing = true
  /// Written once by the builder while it owns the pipeline, read only by recomputations, which
  /// the lock orders after it.
  private weak var target: DerivedObservable<Output>?
  private let reduce: (Event) -> Output?
  private let isDuplicate: ((Output, Output) -> Bool)?
  /// The last value published; only recomputations touch it, one at a time.
  private var lastPublished: Output?

  /// - Parameters:
  ///   - rank: 1 + the highest rank among the sources.
  ///   - isDuplicate: When given, a value that is a duplicate of the last one published is not
  ///     published (``ReadOnlyObservable/removeDuplicates(by:)``).
  ///   - reduce: Folds one upstream event into the state and returns the value to publish, or
  ///     `nil` to publish nothing.
  init(
    rank: Int,
    isDuplicate: ((Output, Output) -> Bool)? = nil,
    reduce: @escaping (Event) -> Output?
  ) {
    self.rank = rank
    self.isDuplicate = isDuplicate
    self.reduce = reduce
  }

  deinit {
    lock.deallocate()
  }

  /// Queues an upstream event and marks the pipeline stale in this thread's propagation, unless
  /// it already waits in one (that recomputation will take this event too).
  func receive(_ event: Event) {
    let context = ObservationContext.current
    let propagation = context.currentPropagation
    lock.lock()
    events.append(Queued(event: event, propagation: propagation))
    let mustSchedule = !isBuilding && scheduled.insert(propagation).inserted
    lock.unlock()
    if mustSchedule { context.schedule(self) }
  }

  /// Set from `init` until ``attach(_:)``.
  @exclusivity(unchecked) private var isBuilding = true

  /// Builder only, before ``attach(_:)``: folds the queued events; returns the seed, or `nil`
  /// when none yields a value.
  func seed() -> Output? {
    lock.lock()
    let queued = events.takeAll()
    lock.unlock()
    var seed: Output?
    for item in queued {
      if let value = reduce(item.event) { seed = value }
    }
    lastPublished = seed
    return seed
  }

  /// Builder only: connects the derived observable, publishes whatever arrived after the seed,
  /// and gives up the pipeline.
  func attach(_ derived: DerivedObservable<Output>) {
    target = derived
    lock.lock()
    isBuilding = false
    // What arrived from other threads while the builder registered is published now.
    for index in 0..<events.count { ended.insert(events[index].propagation) }
    lock.unlock()
    run()
  }

  /// Recomputes from the events queued since the last run, unless a recomputation is running
  /// on another thread: that one runs again and takes them.
  func recompute() {
    let propagation = ObservationContext.current.currentPropagation
    lock.lock()
    scheduled.remove(propagation)
    ended.insert(propagation)
    if isRecomputing {
      lock.unlock()
      return
    }
    isRecomputing = true
    lock.unlock()
    run()
  }

  /// Entered with the pipeline's recomputation role: publishes, in queue order, one value per
  /// ended propagation at the head of the queue; gives the role up at the first propagation that
  /// has not ended (its own thread recomputes it then).
  private func run() {
    while true {
      lock.lock()
      guard let first = events.first, ended.contains(first.propagation) else {
        isRecomputing = false
        lock.unlock()
        return
      }
      let propagation = first.propagation
      // Fold the propagation's events one at a time (no array per change): `reduce` is user
      // code and runs without the lock.
      var latest: Output?
      while let next = events.first, next.propagation == propagation {
        _ = events.popFirst()
        lock.unlock()
        if let value = reduce(next.event) { latest = value }
        lock.lock()
      }
      if !events.contains(where: { $0.propagation == propagation }) {
        ended.remove(propagation)
      }
      lock.unlock()
      if let latest { publish(latest) }
    }
  }

  private func publish(_ value: Output) {
    // A dead target means the derived observable is going away and its upstream registrations
    // with it; events that still arrive (from a round on another thread) are dropped.
    guard let target else { return }
    if let isDuplicate, let lastPublished, isDuplicate(lastPublished, value) { return }
    lastPublished = value
    target.send(value)
  }
}
