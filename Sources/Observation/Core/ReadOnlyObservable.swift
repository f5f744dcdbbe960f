import Dispatch

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
  typealias NewEntry = ObserverEntry<Value>.Draft
  typealias Callback = (Value, ObservableOptions) -> Void

  // The engine, by concern (Core/Delivery): `DeliveryState` decides which thread delivers and
  // when; `+Setting` stores a value and starts its round; `+Registration` adds and removes
  // entries; `+Round` is the one place a round calls user code; `+Draining` is the deliverer's
  // loop over queued work; `+Turns` is a setter waiting for its turn; `+Gates` holds `.initial`
  // registrations made during another thread's round and catches them up; `+Lanes` keeps the
  // main-actor and actor lanes. This file holds the state they share and the public API. The
  // contract they implement is stated in the Threading and Ordering contract articles.

  /// Work that arrives while a round is running, applied in arrival order between rounds.
  enum PendingEvent {
    /// A stored change and who made it (see ``DeliveryState/Setter``).
    case change(old: Value, new: Value, setter: DeliveryState.Setter)
    case add(Entry)
    /// A registration whose `.initial` runs on another thread (see ``DeliveryState``).
    case gated(RegistrationGate<Value>)
    case cancelled

    /// The entry of a queued registration that is still to be applied.
    var registration: Entry? {
      switch self {
      case .add(let entry): entry
      case .gated(let gate) where !gate.isCancelled: gate.entry
      case .gated, .change, .cancelled: nil
      }
    }
  }

  let lock = Lock()
  /// ``ObservationContext/slot``, read once here instead of behind a `swift_once` on every set.
  let contextSlot = ObservationContext.slot

  // Every property below is guarded by `lock`, with one exception that makes delivery cheap:
  // while a thread is the deliverer (see `state`), only that thread changes `observers` (always
  // under the lock), so it may also read `observers` without the lock. Other threads queue
  // their changes instead. Dynamic exclusivity checks would cost more than a delivery and cannot
  // see the lock, hence `@exclusivity(unchecked)`.
  @exclusivity(unchecked) var storage: Value
  @exclusivity(unchecked) var version: UInt = 0
  @exclusivity(unchecked) var observers = ObserverList<Value>()
  @exclusivity(unchecked) var state = DeliveryState()
  @exclusivity(unchecked) var pending = WorkQueue<PendingEvent>()
  /// Whether `pending` holds work. Checked instead of `pending` itself because any use of the
  /// generic queue costs a metadata look-up, which would dominate a set that queues nothing.
  @exclusivity(unchecked) var hasPending = false
  /// How many registrations `pending` holds that are neither applied nor cancelled, and where
  /// each token's or binding's waits (a position in `pending`), keyed by its identity.
  @exclusivity(unchecked) var queuedRegistrationCount = 0
  @exclusivity(unchecked) var queuedRegistrations: [UInt: Int] = [:]
  /// Whether the deliverer has work to do before its next round: removals from other threads,
  /// or gated registrations to catch up.
  @exclusivity(unchecked) var hasBoundaryWork = false
  @exclusivity(unchecked) var deferredRemovals: [Selection] = []
  /// Removals made while a thread delivers, kept until the deliverer gives up its role (by then
  /// the removed closures, and so their main-actor handles, are released): a main-actor call
  /// already waiting for the main queue checks them before it runs. Each ends only the
  /// registrations made before it (``MainActorHandle/serial`` below `before`), so an owner that
  /// registers again at once is not taken for its ended registration.
  ///
  /// A waiting main-actor call checks these removals only when the epoch of ``mainActorEnds``
  /// moved since it last did (see `runWaitingCall`): each one recorded moves it, where it is
  /// appended. Emptying them ends nothing.
  @exclusivity(unchecked) var endedDuringDelivery: [(selection: Selection, before: UInt)] = []
  /// What this observable's main-actor targets share (see ``MainActorEnds``): made with the first
  /// main-actor lane.
  @exclusivity(unchecked) var mainActorEnds: MainActorEnds?
  /// The serial of the next main-actor handle.
  @exclusivity(unchecked) var nextHandleSerial: UInt = 0
  /// Registrations the deliverer has reached behind a gate that was still closed, with the
  /// rounds they missed: they join the list, in order, once every gate among them is open and
  /// they are caught up (see ``HeldRegistrations``).
  @exclusivity(unchecked) var held: HeldRegistrations<Value>?
  /// The held registrations the deliverer is catching up right now: a removal still finds them.
  @exclusivity(unchecked) var catchingUp: HeldRegistrations<Value>?
  /// Whether `held` or `catchingUp` is set: checked instead of them on every registration and
  /// removal, since reading a generic optional costs a metadata look-up.
  @exclusivity(unchecked) var hasHeldRegistrations = false
  @exclusivity(unchecked) var needsCompaction = false
  /// Setters from other threads waiting to be admitted, oldest first.
  @exclusivity(unchecked) var admissionWaiters: [AdmissionWaiter] = []
  @exclusivity(unchecked) var tracer: Tracer?
  /// The transaction whose round for this observable is still to run, if this observable joined
  /// it marked (see ``ObservationContext/join(_:marked:_:)``).
  @exclusivity(unchecked) var joinedTransaction: TransactionMark?
  /// The lanes of this observable's main-actor registrations, one per main scheduler (almost
  /// always just `.main`); they only ever grow. A round takes a copy under the lock.
  @exclusivity(unchecked) var mainActorLanes: [any RoundLane] = []
  /// The lanes of this observable's registrations made on other actors, one per actor.
  @exclusivity(unchecked) var actorLanes: [ActorLane<Call<Value>>] = []
  /// Whether `mainActorLanes` is not empty, checked instead of it so that an observable without
  /// main-actor registrations pays nothing per round.
  @exclusivity(unchecked) var hasMainActorLanes = false

  init(initialValue: Value) {
    storage = initialValue
  }

  /// What a registration on this observable keeps alive for as long as the registration lasts:
  /// nothing here, since a model owns its observables; a derived observable, which nobody owns
  /// but its users, returns itself (see ``keepingAlive(_:)``).
  var keptAliveByRegistrations: AnyObject? { nil }

  deinit {
    // Nothing else can reach the observable now, so releasing the closures here runs no user
    // code under the lock.
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
  ///   - isolation: Where `closure` runs: by default the isolation of the calling code (the
  ///     main actor in a `@MainActor` type, an actor in its methods, none in nonisolated code).
  ///     See the Threading article.
  ///   - closure: Receives the value and the single option being delivered, in `isolation`.
  public final func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    closure: @escaping (Value, ObservableOptions) -> Void
  ) {
    register(
      NewEntry(
        owner: observer,
        options: options,
        callback: CallbackIsolation(isolation).confine(
          keepingAlive(closure), owner: observer, key: .replaceable(ownedBy: observer), on: self)
      ),
      replacing: removeIfExists,
      initial: options.contains(.initial) ? closure : nil
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
    lock.withLock { observers.liveCount }
  }

  /// The slots the queue of pending work holds on to, for tests of its memory.
  final var pendingCapacity: Int {
    lock.withLock { pending.capacity }
  }

  /// How many setters wait to be admitted, for tests of admission.
  final var settersWaitingForAdmission: Int {
    lock.withLock { admissionWaiters.count }
  }

  /// The rounds kept for registrations held behind a closed gate, for tests of its bound.
  final var heldBacklogCount: Int {
    lock.withLock { held?.backlog.count ?? 0 }
  }
}

// Every stored property is guarded by `lock` (see the note on the properties above). The
// registered closures are called one at a time, never concurrently, and in the isolation they
// were registered from: a main-actor or actor closure only on its executor (`CallbackIsolation`).
// One case Swift cannot check: a non-`@Sendable` closure registered from nonisolated code runs
// on the delivering thread, which may be another thread (see the Threading article).
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
