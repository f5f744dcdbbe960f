/// Turns the upstream rounds of a derived observable into its own values, one at a time and in
/// arrival order, and publishes them with ``ReadOnlyObservable/send(_:)``.
///
/// Upstream rounds can arrive on several threads at once (the two sources of `combineLatest` may
/// be set on different threads) and re-entrantly (an observer of the derived value sets a
/// source). The pipeline serializes them the way the core serializes rounds: the first thread to
/// arrive becomes the *drainer* and processes events, its own and those queued meanwhile by other
/// threads or by re-entrant calls, until the queue is empty. No lock is held while `reduce` (user
/// code) or `send` runs. So `reduce` is never called concurrently with itself and may keep state
/// without a lock.
///
/// The builder of the derived observable holds the drainer role from `init` until ``attach(_:)``:
/// the `.initial` values that arrive while it registers upstream are queued and turned into the
/// seed value, so the seed is exactly what the registrations saw and no change is lost between
/// them.
final class DerivedPipeline<Event, Output> {
  private let lock = Lock()
  private var events = WorkQueue<Event>()  // guarded by `lock`
  /// Whether `events` is non-empty. Checked instead of `events` because this code runs
  /// unspecialized, where any use of the generic array costs a metadata look-up per change.
  private var hasEvents = false  // guarded by `lock`
  private var isDraining = true  // guarded by `lock`; the builder holds the role until `attach`
  /// Written once by the builder while it drains, read only by drainers; the drainer role is
  /// handed over under `lock`, which orders the accesses.
  private weak var target: DerivedObservable<Output>?
  private let reduce: (Event) -> Output?

  /// - Parameter reduce: Folds one upstream event into the state and returns the value to
  ///   publish, or `nil` to publish nothing (for example a duplicate).
  init(reduce: @escaping (Event) -> Output?) {
    self.reduce = reduce
  }

  deinit {
    lock.deallocate()
  }

  /// Queues an upstream event, and processes the queue unless another call already does.
  func receive(_ event: Event) {
    lock.lock()
    if isDraining {
      events.append(event)
      hasEvents = true
      lock.unlock()
      return
    }
    isDraining = true
    lock.unlock()
    process(event)
    drain()
  }

  /// Builder only, before ``attach(_:)``: folds the queued events in order until one yields a
  /// value, the seed. Returns `nil` when none does.
  func seed() -> Output? {
    while let event = popFirst() {
      if let value = reduce(event) { return value }
    }
    return nil
  }

  /// Builder only: connects the derived observable, publishes whatever arrived after the seed,
  /// and gives up the drainer role.
  func attach(_ derived: DerivedObservable<Output>) {
    target = derived
    drain()
  }

  private func popFirst() -> Event? {
    lock.lock()
    defer { lock.unlock() }
    guard hasEvents else { return nil }
    let event = events.popFirst()
    hasEvents = !events.isEmpty
    return event
  }

  private func process(_ event: Event) {
    // A dead target means the derived observable is going away and its upstream registrations
    // with it; events that still arrive (from a round on another thread) are dropped.
    guard let target, let value = reduce(event) else { return }
    target.send(value)
  }

  private func drain() {
    while true {
      lock.lock()
      guard hasEvents else {
        isDraining = false
        lock.unlock()
        return
      }
      lock.unlock()
      takeNextEvent()
    }
  }

  /// The slow half of ``drain()``, kept apart so the common case never touches `events`.
  @inline(never)
  private func takeNextEvent() {
    if let event = popFirst() { process(event) }
  }
}
