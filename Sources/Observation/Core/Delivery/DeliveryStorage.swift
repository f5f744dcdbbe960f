/// Everything an observable needs to deliver its changes: its registrations, the queue of work
/// that arrives while a round runs, the state machine that decides who delivers (``state``), and
/// the lanes of its main-actor and actor registrations.
///
/// An observable makes it with its first registration, trace or transaction (see
/// ``ReadOnlyObservable/makeDeliveryIfNeeded()``) and keeps it from then on, so an observable
/// nobody observes is only its value and its lock.
///
/// Every property is guarded by the owning observable's lock, with one exception that makes
/// delivery cheap: while a thread is the deliverer (see ``state``), only that thread changes
/// ``observers`` (always under the lock), so it may also read ``observers`` without the lock.
/// Other threads queue their changes instead. Dynamic exclusivity checks would cost more than a
/// delivery and cannot see the lock, hence `@exclusivity(unchecked)`.
final class DeliveryStorage<Value> {
  typealias Entry = ObserverEntry<Value>

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

  /// Moves with every value stored once the storage exists: a compare-and-set (`sendUpdate`,
  /// which makes the storage) stores only if it did not.
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

  init() {}

  deinit {
    // Nothing else can reach the observable now, so releasing the closures here runs no user
    // code under the lock.
    observers.deallocate()
  }
}
