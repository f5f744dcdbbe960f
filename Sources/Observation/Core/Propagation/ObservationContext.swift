import PropertyObservationAtomics

/// A derived value that a change has made stale: recomputed once per propagation, after every
/// node of a lower rank, so it never combines values that did not coexist.
protocol PropagationNode: AnyObject {
  /// Above the rank of every observable the node reads (a root ``Observable`` has rank 0). It
  /// may rise while the node waits (a `flatMapLatest` upstream switched to a higher-ranked
  /// observable); it never falls.
  var rank: Int { get }
  /// Recomputes from the latest inputs and publishes; `context` is the calling thread's.
  func recompute(in context: ObservationContext)
}

/// One outermost transaction of one thread. An observable it changed carries it until its round
/// runs at the transaction's end, so that a later change in the same transaction finds it has
/// joined without a look-up (see ``ObservationContext/join(_:marked:_:)``).
struct TransactionMark: Equatable {
  let context: ObjectIdentifier
  let serial: UInt64
}

/// One propagation of one thread: events of a derived pipeline that carry the same tag are folded
/// into one value.
struct PropagationTag: Hashable {
  let context: ObjectIdentifier
  let serial: UInt64
}

/// Another thread's propagation that the caller's goes before (see
/// ``ObservationContext/goesBefore``): its thread, and the propagation it is in.
struct CrossedPropagation {
  let context: ObservationContext
  let tag: PropagationTag
  /// The root it held, and how many times that root's turn had been given back then: the same
  /// count later means it holds the root still, in the same propagation.
  let root: PropagationGraph
  let givenBack: UInt
}

/// An observable that keeps the value from before a propagation (see
/// ``ObservationContext/recordsValuesBefore``).
protocol ValueBeforeKeeping: AnyObject {
  /// Lets go of `kept`, if it is still the value this observable keeps.
  func forget(_ kept: ValueBefore)
}

/// A change that a transaction stored and whose round waits for the transaction's end.
protocol TransactionParticipant: AnyObject {
  /// Runs the round: the value from before the transaction as old, the current one as new.
  func commitTransaction()
  /// Undoes the change, which no round has delivered yet, and returns the set that makes it
  /// again; `nil` for a change that is kept and committed (an array's, which takes no turn).
  func undoTransaction() -> (() -> Void)?
}

/// What one thread is in the middle of: how deep it is in propagations and transactions, the
/// derived nodes waiting to be recomputed, and the observables a transaction changed.
///
/// A *propagation* is the outermost round a thread runs (with every round its callbacks cause on
/// this thread), or the end of its outermost transaction. Derived nodes that its rounds make
/// stale are recomputed when it ends, lowest rank first, each once, from its final inputs.
///
/// One per thread, reached through a thread-specific slot, and only ever touched by its thread,
/// so it needs no lock.
final class ObservationContext {
  // Only its own thread touches a context, so Swift's dynamic exclusivity checks (a
  // `swift_beginAccess` per access, a few hundred instructions per change through a derived
  // chain) guard nothing here.
  @exclusivity(unchecked) private(set) var propagationDepth = 0
  /// Counts the propagations this thread queued behind another thread's instead of waiting
  /// (see ``PropagationGraph/queue(_:)``).
  @exclusivity(unchecked) var queuedPropagations: UInt = 0
  /// Counts this thread's propagations, so derived pipelines can tell one from the next. Starts
  /// at a base no earlier context's count can reach (see ``claimSerialBase()``).
  @exclusivity(unchecked) private var propagationSerial = ObservationContext.claimSerialBase()
  @exclusivity(unchecked) private(set) var isFlushing = false
  /// The nodes waiting to be recomputed, lowest rank first, first scheduled first among equal
  /// ranks: O(1) per node when they arrive in that order, O(log n) otherwise, where a scan for
  /// the lowest rank cost O(n) per node.
  @exclusivity(unchecked) private var staleNodes = StaleNodeHeap()

  /// How many `feed` shortcut calls of a chain this thread is inside, counted from the nearest
  /// full round, and the call the deepest of them left for the outermost one to make (see
  /// ``ReadOnlyObservable/feed(_:)``): a chain of one-input operators then runs as a loop, so its
  /// depth does not grow the stack.
  @exclusivity(unchecked) var chainDepth = 0
  @exclusivity(unchecked) var deferredChainCall: (() -> Void)?

  /// Tokens whose release waits for an enclosing release on this thread to finish (see
  /// ``release(_:)``).
  @exclusivity(unchecked) private var pendingReleases: [[ObservationToken]] = []
  @exclusivity(unchecked) private var isReleasing = false

  @exclusivity(unchecked) private(set) var transactionDepth = 0
  /// The changes of the current transaction, in the order their observables were first changed.
  @exclusivity(unchecked) private var participants: [any TransactionParticipant] = []
  /// The observables of `participants` that joined without their mark (see ``join(_:marked:_:)``),
  /// so that asking whether one has joined costs O(1) rather than a search of every change so far
  /// (quadratic in a transaction over many observables).
  /// Each record keeps its observable alive until the transaction ends, so no identifier here
  /// can be reused by another object meanwhile.
  @exclusivity(unchecked) private var participantIdentities: Set<ObjectIdentifier> = []

  /// Guards `nextSerialBase`.
  private static let serialBaseLock = Lock()
  nonisolated(unsafe) private static var nextSerialBase: UInt64 = 0

  /// A base for a new context's propagation serials, 2³² past the previous context's.
  ///
  /// A tag names its context by identity, and a context is released when its thread exits: a new
  /// thread's context can then be made at the same address, while a pipeline still holds tags of
  /// the old one. Were both counts to start at 0, their tags would be equal, and the pipeline would
  /// fold one thread's changes into another's propagation and publish fewer values than were set
  /// (seen: a `combineLatest` of three sources set by three new threads, 200 changes each,
  /// published 400 values instead of 600 in 11 of 300 runs). Counted from distinct bases, tags of
  /// different contexts never meet.
  private static func claimSerialBase() -> UInt64 {
    serialBaseLock.withLock {
      nextSerialBase &+= 1 << 32
      return nextSerialBase
    }
  }

  /// The calling thread's context, made on first use and released when the thread exits.
  static var current: ObservationContext {
    if let raw = slot.value {
      return Unmanaged<ObservationContext>.fromOpaque(raw).takeUnretainedValue()
    }
    let context = ObservationContext()
    slot.value = Unmanaged.passRetained(context).toOpaque()
    return context
  }

  /// Runs `body` with the calling thread's context, without the retain and release that reading
  /// ``current`` costs (two atomic operations per change): the thread's slot keeps the context
  /// alive until the thread exits, after every call on it has returned.
  ///
  /// - Parameters:
  ///   - slot: ``slot``, which a caller on a hot path keeps in a stored property: reading the
  ///     static costs a `swift_once` check per call.
  ///   - body: Runs with the context, on the calling thread.
  /// - Returns: What `body` returns.
  @inline(__always)
  static func withCurrent<Result>(
    slot: ThreadLocal = slot,
    _ body: (ObservationContext) throws -> Result
  ) rethrows -> Result {
    guard let raw = slot.value else { return try body(current) }
    return try Unmanaged<ObservationContext>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
  }

  /// The thread-specific slot that holds each thread's context.
  static let slot = ThreadLocal { raw in
    #if canImport(Darwin)
      Unmanaged<ObservationContext>.fromOpaque(raw).release()
    #else
      if let raw { Unmanaged<ObservationContext>.fromOpaque(raw).release() }
    #endif
  }

  // MARK: - Propagations

  /// Counts the rounds and registrations this thread has started, for a thread waiting for a
  /// turn it holds: one that moved is a slow propagation, not a stuck one (see
  /// ``TurnWaiter``). Written only by this thread; read by others.
  let progress: UnsafeMutablePointer<po_counter> = {
    let counter = UnsafeMutablePointer<po_counter>.allocate(capacity: 1)
    counter.initialize(to: po_counter())
    return counter
  }()

  /// Counts the work other threads posted for this one (see ``acceptPost(_:)``), so that
  /// looking for it costs one load when none arrived; and the count last taken.
  let posts: UnsafeMutablePointer<po_counter> = {
    let counter = UnsafeMutablePointer<po_counter>.allocate(capacity: 1)
    counter.initialize(to: po_counter())
    return counter
  }()
  @exclusivity(unchecked) private var postsSeen: UInt = 0

  /// Guards ``postedCatchUps`` and writes of ``posts``.
  private let postsLock = Lock()

  deinit {
    postsLock.deallocate()
    posts.deallocate()
    progress.deallocate()
  }

  /// Called before a thread delivers rounds.
  @inline(__always)
  func beginPropagation() {
    po_counter_increment(progress)
    // The rounds a flush causes belong to the propagation being flushed.
    if propagationDepth == 0 && !isFlushing { propagationSerial &+= 1 }
    propagationDepth += 1
  }

  /// The propagation this thread is in (or was last in).
  var currentPropagation: PropagationTag {
    PropagationTag(context: ObjectIdentifier(self), serial: propagationSerial)
  }

  /// The propagation a store made now belongs to: the current one inside a propagation, the
  /// one the store is about to begin outside.
  var propagationOfStore: PropagationTag {
    let begins = propagationDepth == 0 && !isFlushing
    return PropagationTag(
      context: ObjectIdentifier(self), serial: begins ? propagationSerial &+ 1 : propagationSerial)
  }

  /// Called after; the outermost end recomputes the stale derived nodes, then gives back the
  /// turns the propagation took (outside a transaction, which keeps them until it ends).
  @inline(__always)
  func endPropagation() {
    propagationDepth -= 1
    guard propagationDepth == 0 && !isFlushing else { return }
    if !staleNodes.isEmpty { flush() }
    if heldTurns.count > turnFloor && !isInTransaction { giveBackTurns() }
  }

  // MARK: - Turns

  /// The graphs whose turn this thread holds, in the order it took them (see
  /// ``PropagationGraph``). A propagation takes the turn of each graph it changes and gives them
  /// all back when it ends, so that no other thread's propagation interleaves with it.
  @exclusivity(unchecked) private(set) var heldTurns = HeldTurns()
  /// The turns below this index belong to the propagation that runs a queued one (see
  /// ``runQueuedPropagation(_:)``): the queued one gives back only those it took itself.
  @exclusivity(unchecked) private var turnFloor = 0
  /// How this thread waits, while it does, so that a join can make it stop (see
  /// ``TurnWaits/stopWaiting(_:)``): guarded by ``TurnWaits/lock``.
  @exclusivity(unchecked) var waiter: TurnWaiter?
  /// The graph this thread waits for, if any. Other threads read it in their cycle checks:
  /// guarded by ``TurnWaits/lock``.
  @exclusivity(unchecked) var waitingFor: PropagationGraph?

  /// Whether this thread holds the turn of `graph`.
  @inline(__always)
  func holdsTurn(of graph: PropagationGraph) -> Bool {
    guard !heldTurns.isEmpty else { return false }
    return heldTurns.contains(graph) || holdsTurnOfJoined(graph)
  }

  /// ``holdsTurn(of:)`` when `graph` is not one of the graphs taken: it may have joined one. A
  /// graph taken is a root when taken, and one that joins another while held joins a root this
  /// thread holds too (see ``PropagationGraph/join(_:)``), so the root of `graph` tells.
  @inline(never)
  private func holdsTurnOfJoined(_ graph: PropagationGraph) -> Bool {
    let root = graph.root
    return root !== graph && heldTurns.contains(root)
  }

  /// How ``takeTurn(of:breakingCycles:)`` ended.
  enum TurnOutcome {
    /// This thread holds the turn.
    case holding
    /// Waiting could deadlock through the library: a cycle of waits between threads.
    case cycle
    /// The holder made no progress for a whole ``turnTimeout``: it may wait for this thread in
    /// user code.
    case stuck
  }

  /// Takes the turn of `graph` for the current propagation, waiting for it if another thread
  /// holds it. Waiting could deadlock (see ``PropagationGraph/waitForTurn(on:breakingCycles:)``):
  /// then it returns `.cycle` or `.stuck`, holding nothing new, and the caller queues its
  /// propagation whole. With `breakingCycles`, a cycle of waits makes the other thread queue
  /// instead, and only a stuck holder makes this give up.
  func takeTurn(of graph: PropagationGraph, breakingCycles: Bool = false) -> TurnOutcome {
    if holdsTurn(of: graph) { return .holding }
    if graph.takeIfFree(by: self) {
      heldTurns.append(graph)
      return .holding
    }
    switch graph.waitForTurn(on: self, breakingCycles: breakingCycles) {
    case .holding(let root):
      // A wait moved to a root this thread holds holds nothing new.
      if !heldTurns.contains(root) { heldTurns.append(root) }
      runPostedCatchUps()
      return .holding
    case .mustQueue(let stuck):
      return stuck ? .stuck : .cycle
    }
  }

  /// Records a turn taken by ``PropagationGraph/takeIfFree(by:)`` or a wait.
  @inline(__always)
  func noteTaken(_ graph: PropagationGraph) {
    heldTurns.append(graph)
  }

  /// Whether this thread took the turn of `first` before that of `second` (both held).
  func heldEarlier(_ first: PropagationGraph, than second: PropagationGraph) -> Bool {
    let a = heldTurns.firstIndex { $0.root === first } ?? Int.max
    let b = heldTurns.firstIndex { $0.root === second } ?? Int.max
    return a < b
  }

  /// Gives back the turns taken since the outermost propagation began, if this thread is
  /// outside every propagation and transaction: for a caller that took a turn and then did not
  /// start a propagation after all.
  func giveBackTurnsIfOutside() {
    guard propagationDepth == 0 && !isFlushing && !isInTransaction else { return }
    giveBackTurns()
  }

  @inline(never)
  private func giveBackTurns() {
    // Work posted for this propagation meanwhile makes the root's give-back below refuse.
    // Set too by a propagation that goes before another (see `goesBefore`).
    let recorded = recordsValuesBefore
    if recorded {
      let later = goesBefore
      endRecordingValuesBefore()
      // Its switches' graphs go to the propagation it went before, turn and all.
      if let later, !deferredJoins.isEmpty {
        deferredJoins.removeAll {
          PropagationGraph.handOver($0.0, by: self, to: later) { root in
            (heldTurns.firstIndex { $0 === root } ?? -1) >= turnFloor
          }
        }
      }
    }
    while heldTurns.count > turnFloor {
      // Still listed while it is given back: a queued propagation it runs holds it. Refused
      // while work posted for this propagation waits: run it first, still holding the turn
      // (it may take more turns, given back before this one).
      guard heldTurns.last.giveBack(by: self) else {
        runPostedCatchUps()
        continue
      }
      heldTurns.removeLast()
    }
    if recorded && heldTurns.isEmpty {
      recordsValuesBefore = false
      if !deferredJoins.isEmpty { runDeferredJoins() }
    }
  }

  // MARK: - Crossed switches

  /// Whether this thread's propagation keeps, for each observable it stores into, the value
  /// from before its first store (see ``ReadOnlyObservable/keepValueBeforeLocked(_:in:)``). Set
  /// while it holds the turn of a graph a `flatMapLatest` belongs to: only a switch joins graphs
  /// while propagations run, and only a switch of another thread can go before this
  /// propagation and read those values (see ``goesBefore``).
  @exclusivity(unchecked) var recordsValuesBefore = false
  /// The values kept from before this thread's propagation, to let go of when it ends: the last
  /// kept, linked to the one kept before it (a list through the records, so that keeping one
  /// costs no array operation).
  @exclusivity(unchecked) private var lastValueBefore: ValueBefore?
  /// Another thread's propagation that this one goes before: a switch of this propagation
  /// selected an observable of a graph that propagation holds, while it waited for a turn this
  /// one holds (see ``PropagationGraph/joinSwitching(_:to:)``). It goes on once this one ends.
  /// Meanwhile a registration of this propagation on its graph reads the values from before it
  /// and leaves it the changes to deliver (see ``postWhenThisPropagationEnds(to:_:)``), and the
  /// graphs join when this propagation ends (see ``deferJoin(_:_:)``).
  @exclusivity(unchecked) var goesBefore: CrossedPropagation?
  /// The joins of switches that went before another thread's propagation, made when this
  /// propagation ends.
  @exclusivity(unchecked) private var deferredJoins: [(PropagationGraph, PropagationGraph)] = []
  /// Work that threads whose propagations went before this one's left for it to do when it goes
  /// on (see ``acceptPost(_:)``): guarded by `postsLock`.
  @exclusivity(unchecked) private var postedCatchUps: [() -> Void] = []

  /// Joins `graph` and `selected` once this propagation ends (see ``goesBefore``).
  func deferJoin(_ graph: PropagationGraph, _ selected: PropagationGraph) {
    deferredJoins.append((graph, selected))
    // Its end looks for deferred joins only in a propagation that keeps values: this one holds
    // a graph with a switch, whose root may have been marked only after it took the turn.
    recordsValuesBefore = true
  }

  /// Makes the joins deferred to the end of the propagation, outside every turn.
  @inline(never)
  private func runDeferredJoins() {
    let joins = deferredJoins
    deferredJoins = []
    for (graph, selected) in joins { _ = PropagationGraph.join([graph, selected]) }
    // Joining may have waited for turns; nothing needs them any more.
    giveBackTurns()
  }

  /// Notes that `observable` keeps a value from before this propagation.
  func noteValueBefore(_ kept: ValueBefore) {
    kept.previous = lastValueBefore
    lastValueBefore = kept
  }

  /// Work for other threads' propagations that wait for this one, handed to them when it ends,
  /// each with the propagation it is for.
  @exclusivity(unchecked) private var postsAtEnd: [(CrossedPropagation, () -> Void)] = []

  /// Hands `catchUp` to the thread of `later`, whose propagation waits for this one, when this
  /// one ends (see ``goesBefore``). `catchUp` then runs on that thread, or on this one if
  /// `later` has ended: it may touch only state guarded by a lock it takes (a registration's
  /// catch-up takes its observable's lock, under which its backlog is recorded).
  func postWhenThisPropagationEnds(to later: CrossedPropagation, _ catchUp: @escaping () -> Void) {
    postsAtEnd.append((later, catchUp))
  }

  /// Leaves `catchUp` for this thread to run in the propagation it is in, once the caller's,
  /// which went before it, has ended (see ``goesBefore``). Called by another thread, with the
  /// stripe of a root this thread holds: this thread does not give that root back before it
  /// has run the work (see ``PropagationGraph/giveBack(by:)``).
  func acceptPost(_ catchUp: @escaping () -> Void) {
    postsLock.withLock {
      postedCatchUps.append(catchUp)
      po_counter_increment(posts)
    }
  }

  /// Whether work was posted for this thread since it last ran what was posted.
  var hasPostedCatchUps: Bool { po_counter_load(posts) != postsSeen }

  /// Runs the work other threads posted for this one: the propagations that went before this
  /// one, and left it their changes to deliver, have ended.
  func runPostedCatchUps() {
    guard hasPostedCatchUps else { return }
    let catchUps = postsLock.withLock {
      postsSeen = po_counter_load(posts)
      defer { postedCatchUps = [] }
      return postedCatchUps
    }
    for catchUp in catchUps { catchUp() }
  }

  /// The propagation has ended: runs the work posted for it that no wait ran yet, and lets go
  /// of the values kept from before it.
  @inline(never)
  private func endRecordingValuesBefore() {
    if !postsAtEnd.isEmpty {
      let posts = postsAtEnd
      postsAtEnd = []
      // A propagation that no longer holds the root it held has ended without waiting for this
      // one (a third thread ended its wait): the change is delivered here instead.
      for (later, catchUp) in posts where !later.root.post(catchUp, to: later) { catchUp() }
    }
    runPostedCatchUps()
    var next = lastValueBefore
    lastValueBefore = nil
    while let kept = next {
      next = kept.previous
      kept.previous = nil
      kept.observable.forget(kept)
    }
    goesBefore = nil
  }

  /// Runs `job`, a propagation another thread queued instead of waiting for a turn this thread
  /// holds, as a propagation of its own: its derived values are recomputed, and the turns it
  /// took given back, before it returns.
  func runQueuedPropagation(_ job: () -> Void) {
    let floor = turnFloor
    turnFloor = heldTurns.count
    beginPropagation()
    job()
    endPropagation()
    turnFloor = floor
  }

  /// Marks `node` stale; the caller makes sure a node is scheduled once until it recomputes.
  func schedule(_ node: any PropagationNode) {
    staleNodes.insert(node)
    // A node made stale outside any propagation (a source set during a build) recomputes now.
    if propagationDepth == 0 && !isFlushing { flush() }
  }

  /// Recomputes stale nodes, lowest rank first, until none is left; a recomputation that makes
  /// higher nodes stale adds them to this same pass.
  @inline(never)
  private func flush() {
    isFlushing = true
    defer { isFlushing = false }
    while let node = staleNodes.popLowest() {
      node.recompute(in: self)
    }
  }

  // MARK: - Releasing chains

  /// Cancels and releases `tokens`, the upstream registrations of a derived observable that is
  /// going away. Cancelling may release further derived observables, whose tokens come back
  /// here: they are cancelled in a loop by the outermost call, so a chain of any depth is torn
  /// down without growing the stack.
  func release(_ tokens: consuming [ObservationToken]) {
    pendingReleases.append(consume tokens)
    guard !isReleasing else { return }
    isReleasing = true
    while let next = pendingReleases.popLast() {
      for token in next { token.cancel() }
    }
    isReleasing = false
  }

  // MARK: - Transactions

  /// Whether sets on this thread store without delivering, until the transaction ends.
  @inline(__always)
  var isInTransaction: Bool { transactionDepth > 0 }

  /// The current outermost transaction; no other transaction running now, on this thread or
  /// another, has the same.
  var transaction: TransactionMark {
    TransactionMark(context: ObjectIdentifier(self), serial: transactionSerial)
  }
  @exclusivity(unchecked) private var transactionSerial: UInt64 = 0

  func beginTransaction() {
    if transactionDepth == 0 { transactionSerial &+= 1 }
    transactionDepth += 1
  }

  /// Adds a change of `observable` to the current transaction, unless it has joined already.
  /// `marked` tells whether the caller has just marked the observable with ``transaction``
  /// (under the observable's lock, where it found no mark): then it is checked against the
  /// observables that joined unmarked only, which is none unless another thread's transaction
  /// held the mark meanwhile. An observable found marked by this transaction has joined already
  /// and does not call this; one marked by another transaction joins here, by identity.
  func join(
    _ observable: AnyObject, marked: Bool = false,
    _ makeParticipant: () -> any TransactionParticipant
  ) {
    let identity = ObjectIdentifier(observable)
    if marked {
      guard participantIdentities.isEmpty || !participantIdentities.contains(identity) else {
        return
      }
    } else {
      guard participantIdentities.insert(identity).inserted else { return }
    }
    participants.append(makeParticipant())
  }

  /// Ends a transaction; the outermost end runs one round per changed observable, in the order
  /// they were first changed, as one propagation.
  func endTransaction() {
    transactionDepth -= 1
    guard transactionDepth == 0 else { return }
    // Taken before the turns are given back: giving one back can run a propagation another
    // thread queued, on this thread, and a transaction in it must not find this one's sets
    // still queued and add its own to them (two propagations made as one).
    let queued = queuedTransaction
    queuedTransaction = nil
    if !participants.isEmpty {
      let changed = participants
      participants = []
      participantIdentities.removeAll(keepingCapacity: true)
      beginPropagation()
      for participant in changed { participant.commitTransaction() }
      endPropagation()
    } else {
      giveBackTurnsIfOutside()
    }
    if let queued { runQueuedTransaction(queued) }
  }

  // MARK: - Transactions that cannot wait

  /// A transaction that could not take a turn: the graph it could not take, why, and its sets,
  /// undone or not yet made, in order.
  struct QueuedTransaction {
    let graph: PropagationGraph
    let stuck: Bool
    var sets: [() -> Void]
  }

  /// Set once the current transaction could not take a turn (see
  /// ``queueTransaction(behind:stuck:_:)``).
  @exclusivity(unchecked) private var queuedTransaction: QueuedTransaction?

  /// Whether the current transaction could not take a turn: its later sets are made when it
  /// ends, with the others.
  var isTransactionQueued: Bool { queuedTransaction != nil }

  /// The current transaction could not take the turn of `graph` (waiting could deadlock, see
  /// ``takeTurn(of:breakingCycles:)``), so it cannot be one propagation now: keeping what it
  /// stored and delivering the rest later would split it around the propagations that run
  /// meanwhile. Nothing it stored has been delivered (rounds wait for its end), so its stores
  /// are undone, and they, `set`, and every later set of the transaction are made again when
  /// it ends, as one transaction (see ``runQueuedTransaction(_:)``). The turns it took are kept
  /// until then: the thread it would have waited for no longer waits for them after it ends.
  func queueTransaction(behind graph: PropagationGraph, stuck: Bool, _ set: @escaping () -> Void) {
    var sets: [() -> Void] = []
    var kept: [any TransactionParticipant] = []
    for participant in participants {
      if let redo = participant.undoTransaction() {
        sets.append(redo)
      } else {
        kept.append(participant)
      }
    }
    participants = kept
    sets.append(set)
    queuedTransaction = QueuedTransaction(graph: graph, stuck: stuck, sets: sets)
  }

  /// Adds `set` to the current transaction, which could not take a turn.
  func queueInTransaction(_ set: @escaping () -> Void) {
    queuedTransaction?.sets.append(set)
  }

  /// Makes the sets of a transaction that could not take a turn, as one transaction, once this
  /// thread has given back what it held. A thread that holds no turn now waits for them like any
  /// setter: the cycle it was part of is broken, since it waits for nothing while holding
  /// nothing. It first waits for the graph it could not take: the thread it would have
  /// deadlocked with waits for a turn it just gave back, and taking that back first (a woken
  /// waiter may be passed, see ``TurnState/passingBudget``) would close the same cycle again, an
  /// undone attempt each time, until that thread runs. A thread that still holds turns (the
  /// transaction ran inside a callback or a queued propagation), or that found the holder stuck,
  /// queues them behind the propagation that held the turn, and the transaction returns before
  /// they are stored.
  ///
  /// Made again here, a transaction can still find a cycle with a third thread and end queued
  /// once more: its next attempt then comes after this one returns, in the loop of the
  /// outermost call, so that however many attempts it takes, the stack does not grow.
  private func runQueuedTransaction(_ queued: QueuedTransaction) {
    guard transactionsToMake == nil else {
      transactionsToMake?.append(queued)
      return
    }
    transactionsToMake = WorkQueue()
    transactionsToMake?.append(queued)
    defer { transactionsToMake = nil }
    while let queued = transactionsToMake?.popFirst() {
      let sets = queued.sets
      let job = { withObservationTransaction { for set in sets { set() } } }
      // Behind the propagation that holds the graph, unless the graph is free by now: then
      // this thread makes them itself.
      if queued.stuck || !heldTurns.isEmpty, queued.graph.queue(job) { continue }
      // Holding nothing, it cannot close a cycle by waiting; a holder stuck meanwhile gets
      // the transaction queued behind it, as if found stuck at first.
      if heldTurns.isEmpty && !queued.stuck && takeTurn(of: queued.graph) == .stuck,
        queued.graph.queue(job)
      {
        continue
      }
      job()
      giveBackTurnsIfOutside()
    }
  }

  /// The queued transactions this thread is making again, oldest first, while
  /// ``runQueuedTransaction(_:)`` makes them; `nil` otherwise.
  @exclusivity(unchecked) private var transactionsToMake: WorkQueue<QueuedTransaction>?
}
