/// A value that can be read and observed but not set: the common base of ``Observable`` and of
/// every derived observable (`map(_:)`, `removeDuplicates()`, `combineLatest(_:_:)`).
///
/// Everything here behaves as described on ``Observable``: weak owners, options, rounds in
/// registration order, queued re-entrant changes, and callbacks on the delivering thread. Accept
/// a `ReadOnlyObservable` where you only need to watch a value:
///
/// ```swift
/// func show(_ progress: ReadOnlyObservable<Double>) {
///   progress.addObserver(self, options: [.initial, .new]) { fraction, _ in
///     print("\(Int(fraction * 100))%")
///   }
/// }
/// show(download.progress)  // an Observable<Double>
/// ```
///
/// The class cannot be subclassed outside this module.
public class ReadOnlyObservable<Value> {
  typealias Entry = ObserverEntry<Value>
  typealias Callback = (Value, ObservableOptions) -> Void

  /// Work that arrives while a round is running, applied in arrival order between rounds.
  private enum PendingEvent {
    case change(old: Value, new: Value)
    /// A registration; `gate` is set while another thread is still delivering its `.initial`.
    case add(Entry, gate: InitialGate?)
    case remove(identity: UInt)
    case cancelled
  }

  private let lock = Lock()

  // Every property below is guarded by `lock`, with one exception that makes delivery cheap:
  // while `deliverer` is set, only that thread changes `observers` (always under the lock), so
  // it may also read `observers` without the lock. Other threads queue their changes in
  // `pending` instead. Dynamic exclusivity checks would cost more than a delivery and cannot see
  // the lock, hence `@exclusivity(unchecked)`.
  @exclusivity(unchecked) private var storage: Value
  @exclusivity(unchecked) private var version: UInt = 0
  @exclusivity(unchecked) private var observers = ObserverList<Value>()
  @exclusivity(unchecked) private var deliverer: ThreadID?
  @exclusivity(unchecked) private var pending: [PendingEvent] = []
  @exclusivity(unchecked) private var pendingHead = 0
  /// Whether `pending` holds unapplied work. Checked instead of `pending` itself because any use
  /// of the generic queue costs a metadata look-up, which would dominate a set that queues nothing.
  @exclusivity(unchecked) private var hasPending = false
  @exclusivity(unchecked) private var needsCompaction = false
  @exclusivity(unchecked) private var tracer: Tracer?

  init(initialValue: Value) {
    storage = initialValue
  }

  deinit {
    observers.deallocate()
    lock.deallocate()
  }

  /// The current value.
  ///
  /// Reading returns the latest value set, from any thread, even while an earlier change is still
  /// being delivered; callbacks receive the value of their own round as an argument.
  public var value: Value {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }

  // MARK: - Managing observers

  /// Registers `closure` to be called on changes while `observer` is alive.
  ///
  /// The observable holds `observer` weakly and never calls `closure` after `observer` has been
  /// deallocated, not even on the first change after its death; the registration is pruned
  /// automatically. If `closure` captures `observer` strongly, it keeps it alive: use
  /// ``observe(with:options:_:)`` to get the owner as an argument instead.
  ///
  /// ```swift
  /// user.name.addObserver(self, options: [.initial, .new]) { name, option in
  ///   print("User's name is \(name)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - observer: The owner of the registration, held weakly.
  ///   - removeIfExists: When `true` (the default), the owner's earlier registrations are removed
  ///     first, so the new one replaces them and moves to the end of the order. When `false`, the
  ///     new registration is added beside them.
  ///   - options: Which callbacks to deliver; `[.new]` by default. An empty set is accepted, and
  ///     such a registration is never called.
  ///   - closure: Receives the value and the single option being delivered. It runs on the
  ///     delivering thread (see ``Observable``) and need not be `@Sendable`.
  public final func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    closure: @escaping (Value, ObservableOptions) -> Void
  ) {
    register(
      Entry(owner: observer, options: options, callback: closure),
      replacing: removeIfExists,
      initial: options.contains(.initial) ? closure : nil
    )
  }

  /// Removes every registration owned by `observer`.
  ///
  /// Removing an owner that has no registration does nothing. Called from a callback, the removed
  /// registrations are not called for the rest of the current round; called from another thread
  /// while a round is running, they stop at the next round boundary.
  ///
  /// - Parameter observer: The owner passed to ``addObserver(_:removeIfExists:options:closure:)``
  ///   or ``observe(with:options:_:)``.
  public final func removeObserver(_ observer: AnyObject) {
    remove(identity: Entry.identity(of: observer))
  }

  /// The number of registrations that can still be called.
  ///
  /// Registrations whose owner has been deallocated are not counted, even before they are
  /// pruned. Registrations queued from another thread during a round are counted once that round
  /// ends.
  ///
  /// - Complexity: O(*n*) in the number of registrations.
  public final var observerCount: Int {
    lock.withLock { observers.liveCount }
  }

  /// The slots the queue of pending work holds on to, for tests of its memory.
  final var pendingCapacity: Int {
    lock.withLock { pending.capacity }
  }

  // MARK: - Setting (for Observable and derived observables)

  /// Stores `newValue` and notifies, following the ordering rules on ``Observable``.
  final func send(_ newValue: Value) {
    store(newValue, ifVersion: nil)
  }

  /// Reads the value, lets `body` modify a copy without the lock (it is user code), and stores
  /// the result only if no other set happened meanwhile; otherwise it runs `body` again on the
  /// newer value.
  final func sendUpdate(_ body: (inout Value) throws -> Void) rethrows {
    while true {
      lock.lock()
      var candidate = storage
      let seen = version
      lock.unlock()
      try body(&candidate)
      if store(candidate, ifVersion: seen) { return }
    }
  }

  /// Stores `newValue` unless `expected` is given and the value changed since; then runs the
  /// round, or queues it if a round is already running.
  @discardableResult
  private func store(_ newValue: Value, ifVersion expected: UInt?) -> Bool {
    lock.lock()
    if let expected, expected != version {
      lock.unlock()
      return false
    }
    let oldValue = storage
    storage = newValue
    version &+= 1
    guard deliverer == nil else {
      enqueueChange(old: oldValue, new: newValue)
      lock.unlock()
      return true
    }
    deliverer = .current
    let tracer = tracer
    lock.unlock()
    deliverRound(old: oldValue, new: newValue, tracer: tracer)
    drainPending()
    return true
  }

  // MARK: - Registration and removal (shared by every way of observing)

  /// Adds `entry` and delivers `.initial` through `initial`. A registration with neither `.old`
  /// nor `.new` is not kept, but still replaces the owner's earlier registrations.
  final func register(_ entry: Entry, replacing: Bool, initial: Callback?) {
    lock.lock()
    if let current = deliverer {
      registerWhileDelivering(entry, deliverer: current, replacing: replacing, initial: initial)
      return
    }
    if replacing { removeNow(identity: entry.identity) }
    if !entry.isRemoved { observers.append(entry) }
    guard let initial else {
      lock.unlock()
      return
    }
    // Hold the deliverer role during `.initial`, so no round reaches the new observer before it.
    let value = storage
    deliverer = .current
    lock.unlock()
    initial(value, .initial)
    drainPending()
  }

  /// The half of ``register(_:replacing:initial:)`` for when a round is running: entered with
  /// the lock held, returns with it released. Kept apart (like ``drainQueue()``) so that the
  /// common registration does not pay the generic queue's metadata look-up.
  @inline(never)
  private func registerWhileDelivering(
    _ entry: Entry,
    deliverer current: ThreadID,
    replacing: Bool,
    initial: Callback?
  ) {
    if replacing {
      removeWhileDelivering(identity: entry.identity, onDeliveringThread: current == .current)
    }
    // The entry waits in the queue, so that it sees only the changes made after this point.
    if current == .current {
      // Re-entrant: this thread owns delivery, so `.initial` can simply go out now.
      if !entry.isRemoved { enqueue(.add(entry, gate: nil)) }
      let value = storage
      lock.unlock()
      initial?(value, .initial)
      return
    }
    // Another thread is delivering. `.initial` still goes out here, synchronously; the gate
    // stops that thread from applying the entry (and so calling it) while `.initial` runs.
    let gate = initial == nil || entry.isRemoved ? nil : InitialGate(thread: .current)
    if !entry.isRemoved { enqueue(.add(entry, gate: gate)) }
    let value = storage
    lock.unlock()
    guard let initial else { return }
    initial(value, .initial)
    guard let gate else { return }
    lock.lock()
    gate.isRunning = false
    // If the delivering thread reached the entry meanwhile, it handed delivery over to us.
    let isHandedOver = deliverer == .current
    lock.unlock()
    if isHandedOver { drainPending() }
  }

  /// Removes every registration with `identity`, at once or at the next round boundary.
  final func remove(identity: UInt, isUnique: Bool = false) {
    lock.lock()
    defer { lock.unlock() }
    if let current = deliverer {
      removeWhileDelivering(identity: identity, onDeliveringThread: current == .current)
    } else {
      removeNow(identity: identity, isUnique: isUnique)
    }
  }

  // MARK: - Delivery

  /// Runs one round, then reports it to `tracer`. Only the deliverer calls this, without the
  /// lock.
  private func deliverRound(old oldValue: Value, new newValue: Value, tracer: Tracer?) {
    // Stable for the whole round: appends are queued while a round runs, and removals only mark.
    let base = observers.base
    let count = observers.count
    var outcome = RoundOutcome()
    if observers.oldCount > 0 {
      for index in 0..<count {
        deliver(oldValue, .old, bit: Entry.oldBit, to: base + index, outcome: &outcome)
      }
    }
    for index in 0..<count {
      deliver(newValue, .new, bit: Entry.newBit, to: base + index, outcome: &outcome)
    }
    if let tracer {
      tracer.handler(
        RoundTrace(
          name: tracer.name,
          oldValue: String(describing: oldValue),
          newValue: String(describing: newValue),
          callbackCount: outcome.calls,
          prunedCount: outcome.pruned))
    }
  }

  @inline(__always)
  private func deliver(
    _ value: Value,
    _ option: ObservableOptions,
    bit: UInt,
    to entry: UnsafeMutablePointer<Entry>,
    outcome: inout RoundOutcome
  ) {
    guard entry.pointee.wants(bit) else { return }
    if entry.pointee.isToken {
      entry.pointee.callback(value, option)
      outcome.calls &+= 1
    } else if let owner = entry.pointee.owner {
      // The one weak load per delivery; the strong reference keeps the owner alive for the call.
      entry.pointee.callback(value, option)
      #if compiler(>=6.1)
        extendLifetime(owner)
      #else
        withExtendedLifetime(owner) {}
      #endif
      outcome.calls &+= 1
    } else {
      lock.lock()
      observers.markRemoved(at: entry - observers.base)
      needsCompaction = true
      lock.unlock()
      outcome.pruned &+= 1
    }
  }

  // MARK: - Tracing

  /// Starts or (with `nil`) stops reporting rounds; see ``trace(as:_:)``.
  final func setTracer(_ newTracer: Tracer?) {
    lock.withLock { tracer = newTracer }
  }

  /// Applies queued work in arrival order, running a round for each queued change, until the
  /// queue is empty; then gives up the deliverer role. Only the deliverer calls this.
  private func drainPending() {
    lock.lock()
    guard hasPending || needsCompaction else {
      deliverer = nil
      lock.unlock()
      return
    }
    drainQueue()
  }

  /// The slow half of ``drainPending()``: entered with the lock held, returns with it released.
  /// Kept apart because touching the generic queue costs a metadata look-up per call even when
  /// the code that uses it does not run.
  @inline(never)
  private func drainQueue() {
    while hasPending && pendingHead < pending.count {
      let event = pending[pendingHead]
      if case .add(_, let gate?) = event, gate.isRunning {
        // The registering thread is still inside `.initial`. Waiting for it could deadlock if
        // that callback waits for this thread, so hand delivery over: it drains the rest of
        // the queue, starting with this entry, as soon as its `.initial` returns.
        deliverer = gate.thread
        lock.unlock()
        return
      }
      pending[pendingHead] = .cancelled
      pendingHead += 1
      switch event {
      case .change(let oldValue, let newValue):
        let tracer = tracer
        lock.unlock()
        deliverRound(old: oldValue, new: newValue, tracer: tracer)
        lock.lock()
      case .add(let entry, _):
        if !entry.isRemoved { observers.append(entry) }
      case .remove(let identity):
        removeNow(identity: identity)
      case .cancelled:
        break
      }
    }
    if hasPending {
      pending.removeAll(keepingCapacity: true)
      pendingHead = 0
      hasPending = false
    }
    if needsCompaction {
      // The round marked every entry it found dead and every removal marked its entries, so
      // dropping the marked ones is enough: `compact()` would load every owner's weak reference
      // again (~50 instructions each), which made churn cost 1.2x the weak-owner floor.
      observers.removeMarked()
      needsCompaction = false
    }
    deliverer = nil
    lock.unlock()
  }

  // MARK: - Queue and removal helpers (lock held)

  private func enqueue(_ event: PendingEvent) {
    pending.append(event)
    hasPending = true
  }

  @inline(never)
  private func enqueueChange(old oldValue: Value, new newValue: Value) {
    enqueue(.change(old: oldValue, new: newValue))
  }

  /// Removal while no round runs. The entries are only marked, and compacted once marked
  /// entries make up half the buffer, so removing many registrations one by one stays linear;
  /// their closures are released at once.
  private func removeNow(identity: UInt, isUnique: Bool = false) {
    if observers.markRemoved(identity: identity, isUnique: isUnique, releasingCallbacks: true) {
      observers.removeMarkedIfWorthIt()
    }
  }

  /// Removal while a round is running: queued registrations of `identity` are dropped now; list
  /// entries are marked at once on the delivering thread, or at the next boundary otherwise.
  private func removeWhileDelivering(identity: UInt, onDeliveringThread: Bool) {
    if hasPending {
      for index in pendingHead..<pending.count {
        if case .add(let entry, _) = pending[index], entry.identity == identity {
          pending[index] = .cancelled
        }
      }
    }
    if onDeliveringThread {
      if observers.markRemoved(identity: identity) { needsCompaction = true }
    } else {
      enqueue(.remove(identity: identity))
    }
  }
}

/// Where ``ReadOnlyObservable/trace(as:_:)`` sends its reports.
struct Tracer {
  let name: String
  let handler: (RoundTrace) -> Void
}

/// What one round did, counted as it runs whether or not anyone traces: two additions per
/// callback cost less than a branch on the tracer.
private struct RoundOutcome {
  var calls = 0
  var pruned = 0
}

/// Marks a registration whose `.initial` callback is running on the thread that registered it
/// while another thread was delivering. Guarded by the observable's lock.
private final class InitialGate {
  let thread: ThreadID
  var isRunning = true

  init(thread: ThreadID) {
    self.thread = thread
  }
}

// Every stored property is guarded by `lock` (see the note on the properties above).
extension ReadOnlyObservable: @unchecked Sendable where Value: Sendable {}

extension ReadOnlyObservable: CustomStringConvertible {
  /// The type, the value and the number of live observers, for example
  /// `Observable<Int>(42, observers: 2)`.
  public var description: String {
    let (value, count) = lock.withLock { (storage, observers.liveCount) }
    // Derived observables are internal subclasses; name the public type users know them by.
    let typeName = self is Observable<Value> ? "Observable" : "ReadOnlyObservable"
    return "\(typeName)<\(Value.self)>(\(value), observers: \(count))"
  }
}
