import Dispatch

/// A value that can be read and observed but not set: the common base of ``Observable`` and of
/// every derived observable (`map(_:)`, `removeDuplicates()`, `combineLatest(_:_:)`).
///
/// Everything here behaves as described on ``Observable``: weak owners, options, rounds in
/// registration order, queued re-entrant changes, and callbacks in their isolation (nonisolated
/// ones on the delivering thread). Accept a `ReadOnlyObservable` where you only need to watch a
/// value:
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
  typealias NewEntry = ObserverEntry<Value>.Draft
  typealias Callback = (Value, ObservableOptions) -> Void

  // The engine, by concern. Core/Propagation schedules propagations: `PropagationGraph` (with
  // `TurnState`) lets one propagation at a time run in a graph of observables joined by derived
  // values, and `ObservationContext` is a thread's propagation (the turns it holds, the derived
  // values it made stale). Core/Delivery delivers one observable's rounds within a propagation:
  // `DeliveryState` decides who delivers; `+Setting` takes the turn, stores a value and starts
  // its round; `+Registration` adds and removes entries; `+Round` is the one place a round calls
  // user code; `+Draining` is the deliverer's loop over work queued by its own callbacks;
  // `+Lanes` keeps the main-actor and actor lanes. `DeliveryStorage` holds the state they share,
  // made by the first registration; this file holds the box (the value and its lock) and the
  // public API. The contract they implement is stated in the Threading and Ordering contract
  // articles.

  /// Work that arrives while a round is running (see ``DeliveryStorage/PendingEvent``).
  typealias PendingEvent = DeliveryStorage<Value>.PendingEvent

  // The box: its lock, the value and, once anybody observes it, the engine's state. An
  // observable nobody has observed holds nothing else, so a model with many observable
  // properties costs little more than its values (see `DeliveryStorage`).

  /// The bytes of `lock`. It must stay the first stored property: `lock` finds it at the start of
  /// the object's stored properties (see ``InlineLock``), and nothing touches it otherwise.
  private final var lockStorage = InlineLock()

  /// Guards the value and the engine's state.
  @inline(__always)
  final var lock: Lock {
    Lock(inlineAt: lockPrimitive)
  }

  @inline(__always)
  private final var lockPrimitive: UnsafeMutablePointer<LockPrimitive> {
    _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: LockPrimitive.self)
  }

  // Both properties are guarded by `lock`. Dynamic exclusivity checks would cost more than a
  // delivery and cannot see the lock, hence `@exclusivity(unchecked)`.
  @exclusivity(unchecked) var storage: Value
  /// Everything delivery needs, made by the first registration, trace or transaction that
  /// reaches this observable and kept from then on (see ``makeDeliveryIfNeeded()``). While it is
  /// `nil`, nobody observes the observable, no round runs and nothing is queued: a set only
  /// stores.
  @exclusivity(unchecked) var deliveryStorage: DeliveryStorage<Value>?

  init(initialValue: Value) {
    storage = initialValue
    #if DEBUG
      let stored = withUnsafeMutablePointer(to: &lockStorage) { UnsafeMutableRawPointer($0) }
      assert(stored == UnsafeMutableRawPointer(lockPrimitive), "the lock is not stored first")
    #endif
  }

  /// What a registration on this observable keeps alive for as long as the registration lasts:
  /// nothing here, since a model owns its observables; a derived observable, which nobody owns
  /// but its users, returns itself (see ``keepingAlive(_:)``).
  var keptAliveByRegistrations: AnyObject? { nil }

  /// The engine's state of an observable that has it: only code that runs once somebody
  /// registered (a round, a drain, a removal of a registration) reads it this way.
  @inline(__always)
  final var delivery: DeliveryStorage<Value> {
    deliveryStorage.unsafelyUnwrapped
  }

  /// The engine's state, made now if nobody made it yet; lock held.
  @inline(__always)
  final func makeDeliveryIfNeeded() -> DeliveryStorage<Value> {
    if let deliveryStorage { return deliveryStorage }
    return makeDelivery()
  }

  /// The graph a new delivery storage belongs to: a graph of its own for a root observable; a
  /// derived observable's is the one its sources joined.
  func makeGraph() -> PropagationGraph {
    PropagationGraph()
  }

  /// The graph of this observable, made now if nobody made it yet.
  final var propagationGraph: PropagationGraph {
    lock.withLock { makeDeliveryIfNeeded().graph }
  }

  @inline(never)
  private func makeDelivery() -> DeliveryStorage<Value> {
    let made = DeliveryStorage<Value>(graph: makeGraph())
    deliveryStorage = made
    return made
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
  /// ``observe(with:options:isolation:_:)`` to get the owner as an argument instead.
  ///
  /// ```swift
  /// user.name.addObserver(self, options: [.initial, .new]) { name, option in
  ///   print("User's name is \(name)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - observer: The owner of the registration, held weakly.
  ///   - removeIfExists: When `true` (the default), the owner's earlier `addObserver`
  ///     registrations on this observable are removed first, so the new one replaces them and
  ///     moves to the end of the order. Its other registrations (key-path bindings,
  ///     ``observe(with:options:isolation:_:)``) stay. When `false`, the new registration is added beside
  ///     the earlier ones.
  ///   - options: Which callbacks to deliver; `[.new]` by default. An empty set is accepted, and
  ///     such a registration is never called.
  ///   - isolation: Where `closure` runs when it reports no isolation of its own (a reference to
  ///     an actor's method): by default the calling code's. See the Threading article.
  ///   - closure: Receives the value and the single option being delivered, in its own isolation: the one of the code that wrote it (the main actor
  ///     in a `@MainActor` type, an actor in its methods). Written in nonisolated code, it runs
  ///     on the delivering thread, hence `@Sendable`.
  public final func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) closure:
      @escaping @isolated(any) @Sendable (Value, ObservableOptions) -> Void
  ) {
    addObserver(
      observer, removeIfExists: removeIfExists, options: options,
      in: CallbackIsolation(of: closure.isolation, calledFrom: isolation),
      closure: CallbackIsolation.synchronous(closure))
  }

  /// ``addObserver(_:removeIfExists:options:isolation:closure:)`` for the library's own
  /// registrations: `closure` runs in `isolation`, which the caller vouches for.
  final func addObserver(
    _ observer: AnyObject, removeIfExists: Bool, options: ObservableOptions,
    in isolation: CallbackIsolation, closure: @escaping Callback
  ) {
    var handleSerial: UInt?
    let callback = isolation.confine(
      keepingAlive(closure), owner: observer, key: .replaceable(ownedBy: observer), on: self,
      handleSerial: &handleSerial)
    register(
      NewEntry(owner: observer, options: options, callback: callback),
      replacing: removeIfExists,
      initial: closure,
      sendsInitial: options.contains(.initial),
      endingHandlesBefore: handleSerial
    )
  }

  /// Removes every registration owned by `observer`: its `addObserver` and
  /// ``observe(with:options:isolation:_:)`` registrations and its key-path bindings from this observable.
  ///
  /// Removing an owner that has no registration does nothing. Called from a callback, the removed
  /// registrations are not called for the rest of the current round; called from another thread
  /// while a round is running, they are not called for any later round.
  ///
  /// - Parameter observer: The owner passed to ``addObserver(_:removeIfExists:options:isolation:closure:)``
  ///   or ``observe(with:options:isolation:_:)``.
  public final func removeObserver(_ observer: AnyObject) {
    remove(.owner(Entry.identity(of: observer)))
  }

  /// The number of registrations that can still be called.
  ///
  /// Registrations whose owner has been deallocated are not counted, even before they are
  /// pruned. Registrations queued from another thread during a round are counted once that round
  /// ends.
  ///
  /// - Complexity: O(*n*) in the number of registrations.
  public final var observerCount: Int {
    lock.withLock { deliveryStorage?.observers.liveCount ?? 0 }
  }

  /// The slots the queue of pending work holds on to, for tests of its memory.
  final var pendingCapacity: Int {
    lock.withLock { deliveryStorage?.pending.capacity ?? 0 }
  }

}

// `lockStorage` is touched only by the platform's locking calls, through `lock`.
// `storage`, `deliveryStorage` and what `DeliveryStorage` holds are guarded by `lock` (the
// `PropagationGraph` it refers to guards its own state with its lock stripe), except that the
// deliverer (`DeliveryState`), which alone changes `observers`, may read them without it.
// Registered closures run one at a time, in their own isolation: a main-actor or actor closure
// only on its executor, a nonisolated one (`@Sendable` in the public API, see
// `CallbackIsolation`) on the delivering thread. The library's own closures hold only
// `Sendable` values or state guarded by a lock or that rule.
extension ReadOnlyObservable: @unchecked Sendable where Value: Sendable {}

extension ReadOnlyObservable: CustomStringConvertible {
  /// The type, the value and the number of live observers, for example
  /// `Observable<Int>(42, observers: 2)`.
  public var description: String {
    let (value, count) = lock.withLock {
      (storage, deliveryStorage?.observers.liveCount ?? 0)
    }
    // Derived observables are internal subclasses; name the public type users know them by.
    let typeName = self is Observable<Value> ? "Observable" : "ReadOnlyObservable"
    return "\(typeName)<\(Value.self)>(\(value), observers: \(count))"
  }
}
