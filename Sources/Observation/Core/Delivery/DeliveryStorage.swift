/// Everything an observable needs to deliver its changes: its graph (whose turn a propagation
/// takes), its registrations, the queue of work that arrives while a round runs, the state that
/// decides who delivers (``state``), and the lanes of its main-actor and actor registrations.
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
    /// A change the deliverer stored inside a callback of its round.
    case change(old: Value, new: Value)
    case add(Entry)
    case cancelled

    /// The entry of a queued registration that is still to be applied.
    var registration: Entry? {
      switch self {
      case .add(let entry): entry
      case .change, .cancelled: nil
      }
    }
  }

  /// The graph this observable belongs to (see ``PropagationGraph``).
  let graph: PropagationGraph

  /// Moves with every value stored once the storage exists: a compare-and-set (`sendUpdate`,
  /// which makes the storage) stores only if it did not.
  @exclusivity(unchecked) var version: UInt = 0
  @exclusivity(unchecked) var observers = ObserverList<Value>()
  @exclusivity(unchecked) var state = DeliveryState()
  /// Whether `pending` holds work. Checked instead of `pending` itself because any use of the
  /// generic queue costs a metadata look-up, which would dominate a set that queues nothing.
  @exclusivity(unchecked) var hasPending = false
  /// Whether the deliverer has removals from other threads to apply before its next round.
  @exclusivity(unchecked) var hasBoundaryWork = false
  @exclusivity(unchecked) var needsCompaction = false
  /// Whether `catchingUp` is not empty: checked instead of it on every round, since reading a
  /// generic array costs a metadata look-up.
  @exclusivity(unchecked) var hasCatchingUp = false
  /// Whether `mainActorLanes` is not empty, checked instead of it so that an observable without
  /// main-actor registrations pays nothing per round.
  @exclusivity(unchecked) var hasMainActorLanes = false
  /// Whether ``tracer`` is set, checked instead of it on every round: the tracer lives in the
  /// occasional state.
  @exclusivity(unchecked) private(set) var hasTracer = false
  /// The state that only re-entrant work, removals from other threads, catch-ups, transactions
  /// and main-actor or actor registrations use, made the first time one of them writes it and
  /// kept from then on (an observable that needed it once is likely to again; making it each
  /// time would cost a re-entrant set an allocation): an observable with a few plain observers
  /// never pays for it. Reads of an unmade one see the empty state.
  @exclusivity(unchecked) private var storedOccasional: Occasional?

  /// The occasional state, made now if nobody made it yet.
  private var occasional: Occasional {
    if let storedOccasional { return storedOccasional }
    let made = Occasional()
    storedOccasional = made
    return made
  }

  /// See ``storedOccasional``; each property is documented where it is declared.
  final class Occasional {
    @exclusivity(unchecked) var pending = WorkQueue<PendingEvent>()
    @exclusivity(unchecked) var queuedRegistrationCount = 0
    @exclusivity(unchecked) var queuedRegistrations: [UInt: Int] = [:]
    @exclusivity(unchecked) var deferredRemovals: [Selection] = []
    @exclusivity(unchecked) var endedDuringDelivery: [(selection: Selection, before: UInt)] = []
    @exclusivity(unchecked) var mainActorEnds: MainActorEnds?
    @exclusivity(unchecked) var nextHandleSerial: UInt = 0
    @exclusivity(unchecked) var catchingUp: [CatchingUpRegistration<Value>] = []
    @exclusivity(unchecked) var joinedRecord: TransactionRecord<Value>?
    @exclusivity(unchecked) var valueBefore: ValueBefore?
    @exclusivity(unchecked) var mainActorLanes: [any RoundLane] = []
    @exclusivity(unchecked) var tracer: Tracer?
  }

  /// Where this observable's rounds are reported, if it is traced (see `trace(as:_:)`).
  var tracer: Tracer? {
    // Inlined: a round reads it, and without a tracer that is one flag.
    @inline(__always) get { hasTracer ? storedOccasional?.tracer : nil }
    set {
      if newValue == nil && !hasTracer { return }
      occasional.tracer = newValue
      hasTracer = newValue != nil
    }
  }

  /// Work that arrives while a round is running, applied in arrival order between rounds.
  var pending: WorkQueue<PendingEvent> {
    get { storedOccasional?.pending ?? WorkQueue() }
    _modify { yield &occasional.pending }
  }
  /// How many registrations `pending` holds that are neither applied nor cancelled, and where
  /// each token's or binding's waits (a position in `pending`), keyed by its identity.
  var queuedRegistrationCount: Int {
    get { storedOccasional?.queuedRegistrationCount ?? 0 }
    _modify { yield &occasional.queuedRegistrationCount }
  }
  var queuedRegistrations: [UInt: Int] {
    get { storedOccasional?.queuedRegistrations ?? [:] }
    _modify { yield &occasional.queuedRegistrations }
  }
  /// Removals from other threads waiting for the deliverer's next round.
  var deferredRemovals: [Selection] {
    get { storedOccasional?.deferredRemovals ?? [] }
    _modify { yield &occasional.deferredRemovals }
  }
  /// Removals made while a thread delivers, kept until the deliverer gives up its role (by then
  /// the removed closures, and so their main-actor handles, are released): a main-actor call
  /// already waiting for the main queue checks them before it runs. Each ends only the
  /// registrations made before it (``MainActorHandle/serial`` below `before`), so an owner that
  /// registers again at once is not taken for its ended registration.
  ///
  /// A waiting main-actor call checks these removals only when the epoch of ``mainActorEnds``
  /// moved since it last did (see `runWaitingCall`): each one recorded moves it, where it is
  /// appended. Emptying them ends nothing.
  var endedDuringDelivery: [(selection: Selection, before: UInt)] {
    get { storedOccasional?.endedDuringDelivery ?? [] }
    _modify { yield &occasional.endedDuringDelivery }
  }
  /// Empties ``endedDuringDelivery`` when the deliverer gives up its role; makes nothing.
  func forgetEndedDuringDelivery() {
    guard let storedOccasional, !storedOccasional.endedDuringDelivery.isEmpty else { return }
    storedOccasional.endedDuringDelivery.removeAll()
  }
  /// What this observable's main-actor targets share (see ``MainActorEnds``): made with the first
  /// main-actor lane.
  var mainActorEnds: MainActorEnds? {
    get { storedOccasional?.mainActorEnds }
    _modify { yield &occasional.mainActorEnds }
  }
  /// The serial of the next main-actor handle.
  var nextHandleSerial: UInt {
    get { storedOccasional?.nextHandleSerial ?? 0 }
    _modify { yield &occasional.nextHandleSerial }
  }
  /// Registrations catching up before they join the list: their `.initial` ran without the
  /// graph's turn (see `registerCatchingUp`).
  var catchingUp: [CatchingUpRegistration<Value>] {
    get { storedOccasional?.catchingUp ?? [] }
    _modify { yield &occasional.catchingUp }
  }
  /// The record of the transaction whose round for this observable is still to run, if this
  /// observable joined it marked (see ``ObservationContext/join(_:marked:_:)``), until that
  /// round runs or the transaction's stores are undone. Its `oldValue`, the value from before
  /// the transaction, is what a registration that does not hold the graph's turn reads as
  /// `.initial`: the transaction's own value is not delivered yet and may still change or be
  /// undone.
  var joinedRecord: TransactionRecord<Value>? {
    get { storedOccasional?.joinedRecord }
    _modify { yield &occasional.joinedRecord }
  }
  /// The value from before the propagation that holds this observable's graph, if that
  /// propagation keeps it (see ``ObservationContext/recordsValuesBefore``), until it ends. In
  /// the occasional state, like everything a plain observable never uses: a field of its own
  /// would save a set in a graph with a switch some 600 instructions (a metadata look-up), and
  /// cost every observed observable 16 bytes.
  var valueBefore: ValueBefore? {
    get { storedOccasional?.valueBefore }
    _modify { yield &occasional.valueBefore }
  }
  /// The transaction of ``joinedRecord``.
  var joinedTransaction: TransactionMark? { storedOccasional?.joinedRecord?.transaction }
  /// The lanes of this observable's main-actor registrations, one per main scheduler (almost
  /// always just `.main`); they only ever grow. A round takes a copy under the lock.
  var mainActorLanes: [any RoundLane] {
    get { storedOccasional?.mainActorLanes ?? [] }
    _modify { yield &occasional.mainActorLanes }
  }

  init(graph: PropagationGraph) {
    self.graph = graph
  }

  deinit {
    // Nothing else can reach the observable now, so releasing the closures here runs no user
    // code under the lock.
    observers.deallocate()
  }
}
