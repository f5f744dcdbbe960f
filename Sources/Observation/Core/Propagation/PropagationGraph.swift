import Dispatch
import PropertyObservationAtomics

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#endif

/// Observables joined by derived values, which run one propagation at a time.
///
/// A root observable gets a graph of its own with its delivery storage; a derived observable
/// joins the graphs of its sources (see ``join(_:)``), and a `flatMapLatest` joins the graph of
/// each observable it switches to. Graphs only ever join, never split: joined graphs form a
/// tree of these objects, whose *root* (the one with no `parent`) holds the turn for all.
///
/// A thread takes the turn of a graph before it stores a value into it and keeps it until its
/// propagation ends (see ``ObservationContext/takeTurn(of:)``), so no other thread's propagation
/// interleaves with it. The decisions (who holds the turn, who comes next) are ``TurnState``'s;
/// this type locks, asks it, unlocks, and wakes the waiter or runs the propagation it names.
///
/// Every variable property is guarded by the graph's stripe of ``LockStripes``: a graph is made
/// with every observed observable, so it has no lock of its own.
final class PropagationGraph {
  @exclusivity(unchecked) private var parent: PropagationGraph?
  /// How many graphs joined into this one, itself included: the smaller joins the larger, so a
  /// walk to the root stays short.
  @exclusivity(unchecked) private var size = 1
  @exclusivity(unchecked) private var state = TurnState()
  /// The holder's context, for other threads' cycle checks. Unowned: a thread's context outlives
  /// every turn it holds.
  @exclusivity(unchecked) private unowned(unsafe) var holderContext: ObservationContext?
  /// The waiters and queued propagations `state` names by id.
  @exclusivity(unchecked) private var waiters: [UInt: TurnWaiter] = [:]
  @exclusivity(unchecked) private var jobs: [UInt: () -> Void] = [:]
  /// Whether a `flatMapLatest` belongs to this graph (meaningful on a root; a join keeps it).
  /// A propagation that holds such a graph keeps the value from before its first store into
  /// each observable, for a switch of another thread that goes before it (see
  /// ``ObservationContext/recordsValuesBefore``).
  @exclusivity(unchecked) private var isSwitching = false

  /// The graph's stripe, and its lock, kept so that a set reads no global.
  fileprivate let stripe: Int
  fileprivate let lock: Lock

  init() {
    stripe = LockStripes.nextIndex()
    lock = LockStripes.lock(at: stripe)
  }

  /// The root of this graph's tree.
  var root: PropagationGraph {
    var graph = self
    while true {
      let lock = graph.lock
      lock.lock()
      let parent = graph.parent
      lock.unlock()
      guard let parent else { return graph }
      graph = parent
    }
  }

  /// The root of this graph's tree, returned with its stripe locked. A root found by ``root``
  /// may join another before its stripe is taken: this looks again until the graph it locked is
  /// still a root, and never looks again while holding a stripe (the walk takes stripes).
  private func lockedRoot() -> PropagationGraph {
    while true {
      let root = root
      root.lock.lock()
      if root.parent == nil { return root }
      root.lock.unlock()
    }
  }

  // MARK: - Taking the turn

  /// Takes the turn for `context` if this is a root nobody holds: the uncontended case of every
  /// propagation, one lock and unlock of a stripe.
  @inline(__always)
  func takeIfFree(by context: ObservationContext) -> Bool {
    let lock = lock
    lock.lock()
    defer { lock.unlock() }
    guard parent == nil, state.take(by: ObjectIdentifier(context)) else { return false }
    holderContext = context
    if isSwitching { context.recordsValuesBefore = true }
    return true
  }

  /// Leaves `catchUp` for the thread of `later` if it still holds this root in the same
  /// propagation, which then runs it before it gives the turn back (see
  /// ``ObservationContext/acceptPost(_:)``).
  ///
  /// - Returns: Whether it was left; `false` if that propagation has given the root back.
  func post(_ catchUp: @escaping () -> Void, to later: CrossedPropagation) -> Bool {
    let lock = lock
    lock.lock()
    defer { lock.unlock() }
    guard parent == nil, holderContext === later.context, state.progress == later.givenBack
    else { return false }
    later.context.acceptPost(catchUp)
    return true
  }

  /// Marks this graph's root as one a `flatMapLatest` belongs to (see ``isSwitching``).
  func markSwitching() {
    let root = lockedRoot()
    root.isSwitching = true
    root.lock.unlock()
  }

  enum WaitOutcome {
    /// The caller holds the turn of this root.
    case holding(PropagationGraph)
    /// Waiting could deadlock: the caller queues its propagation instead. `stuck` if the
    /// holder made no progress for a whole ``turnTimeout`` (it may wait for the caller in user
    /// code), `false` for a cycle of waits through the library.
    case mustQueue(stuck: Bool)
  }

  /// Waits for the turn of this graph's root (in ``TurnState``'s order), unless waiting could
  /// deadlock: when the holder waits, through the library, for a turn this thread holds (seen at
  /// once), or when the holder makes no progress for a whole ``turnTimeout`` (it may be a
  /// callback blocked on this very thread, which the library cannot see).
  ///
  /// With `breakingCycles` (a join, which cannot be queued), a cycle is broken on the other side
  /// instead: the thread that waits for a turn this one holds stops waiting and queues its
  /// propagation, as if it had found the cycle itself.
  func waitForTurn(on context: ObservationContext, breakingCycles: Bool = false) -> WaitOutcome {
    let me = ObjectIdentifier(context)
    let waiter = TurnWaiter(context: context)
    while true {
      TurnWaits.lock.lock()
      let root = root
      let lock = root.lock
      lock.lock()
      guard root.parent == nil else {
        lock.unlock()
        TurnWaits.lock.unlock()
        continue
      }
      if root.state.holder == me || root.state.take(by: me) {
        root.holderContext = context
        if root.isSwitching { context.recordsValuesBefore = true }
        lock.unlock()
        TurnWaits.lock.unlock()
        return .holding(root)
      }
      let holder = root.holderContext
      lock.unlock()
      // Other threads' waits change only under `TurnWaits.lock`, which this thread holds: if the
      // holder does not wait for this thread now, it cannot start to without seeing this wait.
      if let holder, let waitingForMe = TurnWaits.cycle(from: holder, to: context) {
        guard breakingCycles else {
          TurnWaits.lock.unlock()
          return .mustQueue(stuck: false)
        }
        // Stopped now, or stopping already (it has yet to see its outcome): look again.
        _ = TurnWaits.stopWaiting(waitingForMe)
        TurnWaits.lock.unlock()
        ThreadID.yieldProcessor()
        continue
      }
      lock.lock()
      // Nobody may hold it while a woken waiter is about to take it ahead of a queued
      // propagation: then this thread queues behind them.
      guard root.parent == nil, root.holderContext === holder else {
        lock.unlock()
        TurnWaits.lock.unlock()
        continue
      }
      root.state.enqueue(
        waiter: waiter.id, of: me, first: MainQueue.isCurrent,
        now: DispatchTime.now().uptimeNanoseconds)
      root.waiters[waiter.id] = waiter
      waiter.outcome = .waiting
      let progressSeen = root.progressLocked
      context.waitingFor = root
      context.waiter = waiter
      lock.unlock()
      TurnWaits.lock.unlock()
      let outcome = waiter.wait(in: root, progressSeen: progressSeen)
      TurnWaits.lock.withLock {
        context.waitingFor = nil
        context.waiter = nil
      }
      switch outcome {
      case .granted:
        if lock.withLock({ root.isSwitching }) { context.recordsValuesBefore = true }
        return .holding(root)
      case .woken: preconditionFailure("A woken waiter returned without taking the turn.")
      case .gaveUp:
        return .mustQueue(stuck: true)
      case .evicted:
        return .mustQueue(stuck: false)
      case .moved, .waiting: continue
      }
    }
  }

  /// A woken waiter takes the turn if it is still free; the stripe is held by the caller.
  fileprivate func takeWokenLocked(_ waiter: TurnWaiter) -> Bool {
    guard state.takeWoken(waiter.id, by: ObjectIdentifier(waiter.context)) else { return false }
    waiters[waiter.id] = nil
    holderContext = waiter.context
    return true
  }

  /// Removes a waiter that gave up; the stripe is held by the caller.
  fileprivate func forgetWaiterLocked(_ id: UInt) {
    state.removeWaiter(id)
    waiters[id] = nil
  }

  /// The turn's progress: give-backs, and the rounds its holder has started; stripe held.
  fileprivate var progressLocked: Progress {
    Progress(
      givenBack: state.progress,
      holderRounds: holderContext.map { po_counter_load($0.progress) } ?? 0)
  }

  fileprivate var holderContextLocked: ObservationContext? { holderContext }

  /// The propagation that holds this graph's root, if any.
  var holder: CrossedPropagation? {
    let root = lockedRoot()
    defer { root.lock.unlock() }
    // Its thread is in the middle of that propagation, waiting: its count does not move.
    return root.holderContext.map {
      CrossedPropagation(
        context: $0, tag: $0.currentPropagation, root: root, givenBack: root.state.progress)
    }
  }

  // MARK: - Queueing and giving back

  /// Queues `job`, a whole propagation that could not wait for this graph's turn, to run right
  /// after the holder's propagation, on the holder's thread. Returns `false`, queueing nothing,
  /// if nobody holds the turn by now: the caller takes it and runs the propagation itself.
  func queue(_ job: @escaping () -> Void) -> Bool {
    let root = lockedRoot()
    defer { root.lock.unlock() }
    guard !root.state.isFree else { return false }
    let id = TurnWaiter.nextID()
    root.state.enqueue(job: id)
    root.jobs[id] = job
    ObservationContext.current.queuedPropagations &+= 1
    return true
  }

  /// Gives back the turn `context` holds. A root hands it to the next waiter, or first runs the
  /// propagations queued for it, each whole, on this thread; a graph that joined another while
  /// held is held through its root, which is given back on its own.
  ///
  /// - Returns: `false`, giving nothing back, if work was posted for `context`'s propagation
  ///   (see ``post(_:to:)``): the caller runs it, then gives the turn back again.
  func giveBack(by context: ObservationContext) -> Bool {
    let me = ObjectIdentifier(context)
    while true {
      let lock = lock
      lock.lock()
      guard parent == nil else {
        lock.unlock()
        return true
      }
      // Posts are made under this stripe: one made before this point is seen here.
      guard !context.hasPostedCatchUps else {
        lock.unlock()
        return false
      }
      switch state.giveBack(by: me, now: DispatchTime.now().uptimeNanoseconds) {
      case .free:
        holderContext = nil
        lock.unlock()
        return true
      case .wake(let id):
        let waiter = waiters[id].unsafelyUnwrapped
        holderContext = nil
        waiter.outcome = .woken
        lock.unlock()
        waiter.semaphore.signal()
        return true
      case .grant(let id):
        let waiter = waiters.removeValue(forKey: id).unsafelyUnwrapped
        holderContext = waiter.context
        waiter.outcome = .granted
        lock.unlock()
        waiter.semaphore.signal()
        return true
      case .run(let id):
        let job = jobs.removeValue(forKey: id).unsafelyUnwrapped
        lock.unlock()
        context.runQueuedPropagation(job)
      }
    }
  }

  // MARK: - Joining

  /// Joins `graphs` into one graph and returns its root.
  ///
  /// A graph joins another only while nobody is in the middle of a propagation in it that the
  /// other's turn would not cover: it must be free, or held by the calling thread since before
  /// the other. A graph another thread holds is waited for first, like a setter's turn; if that
  /// wait would deadlock, the graphs join all the same, and until that thread's propagation ends
  /// it may overlap one in the rest of the graph (the one case the Threading article names).
  static func join(_ graphs: [PropagationGraph]) -> PropagationGraph {
    var result = graphs[0]
    for graph in graphs.dropFirst() { result = join(result, graph).unsafelyUnwrapped }
    return result.root
  }

  /// Joins the graph of a `flatMapLatest` with that of the observable it switched to, as
  /// ``join(_:)`` does, unless the selected graph is held by another thread that waits, through
  /// the library, for a turn this one holds: two switches into each other's graph at once.
  /// Then the graphs stay apart, this propagation goes before that one (see
  /// ``ObservationContext/goesBefore``) and the caller joins them once it ends.
  ///
  /// - Returns: Whether the graphs are joined.
  static func joinSwitching(_ graph: PropagationGraph, to selected: PropagationGraph) -> Bool {
    join(graph, selected, yieldingToCycles: true) != nil
  }

  private static func join(
    _ first: PropagationGraph, _ second: PropagationGraph, yieldingToCycles: Bool = false
  ) -> PropagationGraph? {
    let context = ObservationContext.current
    let me = ObjectIdentifier(context)
    var mayWait = true
    while true {
      let a = first.root
      let b = second.root
      if a === b { return a }
      // Read before locking: finding a held graph's root takes stripes.
      let aHeldFirst = context.heldEarlier(a, than: b)
      let outcome = withStripes(of: a, b) {
        link(a, b, by: me, aHeldFirst: aHeldFirst, force: !mayWait)
      }
      switch outcome {
      case .linked(let root, let moved, let isSwitching):
        for waiter in moved { waiter.semaphore.signal() }
        if isSwitching && !context.heldTurns.isEmpty { context.recordsValuesBefore = true }
        return root
      case .retry:
        continue
      case .mustWait(let busy):
        // A switch into the graph of a propagation this one goes before already: that one
        // waits for this one, which must neither wait for it nor make it stop waiting.
        if yieldingToCycles, let later = context.goesBefore, busy.holder?.context === later.context
        {
          return nil
        }
        // Held until the caller's propagation ends, like any turn it takes.
        switch busy.waitForTurn(on: context, breakingCycles: true) {
        case .holding(let root):
          // A wait moved to a root this thread holds (another thread joined the graph waited
          // for into it) holds nothing new.
          if !context.holdsTurn(of: root) { context.noteTaken(root) }
          // Posted by a switch that went before this propagation, which has ended.
          context.runPostedCatchUps()
        case .mustQueue(stuck: false) where yieldingToCycles:
          // The holder found this thread waiting for it while it waits for this one, and made
          // this one stop: it waits for this propagation to end, which goes first.
          guard let holder = busy.holder else { continue }
          context.goesBefore = holder
          // Its end hands over work and makes deferred joins only in a propagation that keeps
          // values (see `ObservationContext.giveBackTurns`).
          context.recordsValuesBefore = true
          return nil
        case .mustQueue: mayWait = false
        }
      }
    }
  }

  private enum LinkOutcome {
    /// Linked: the new root, the waiters to wake (they wait on the new root from now on), and
    /// whether the new root is switching.
    case linked(PropagationGraph, moved: [TurnWaiter], isSwitching: Bool)
    /// One of them joined another graph meanwhile: find the roots again.
    case retry
    /// This graph is held by another thread: wait for it first.
    case mustWait(PropagationGraph)
  }

  /// Links one of two roots under the other, both stripes held, if allowed (see ``join(_:)``).
  private static func link(
    _ a: PropagationGraph, _ b: PropagationGraph, by me: ObjectIdentifier, aHeldFirst: Bool,
    force: Bool
  ) -> LinkOutcome {
    guard a.parent == nil, b.parent == nil else { return .retry }
    let child: PropagationGraph
    let root: PropagationGraph
    switch (a.state.holder, b.state.holder) {
    case (nil, nil): (child, root) = a.size <= b.size ? (a, b) : (b, a)
    case (nil, _): (child, root) = (a, b)
    case (_, nil): (child, root) = (b, a)
    case (me, me): (child, root) = aHeldFirst ? (b, a) : (a, b)
    default:
      guard force else { return .mustWait(a.state.holder == me ? b : a) }
      (child, root) = a.state.holder == me ? (b, a) : (a, b)
    }
    return .linked(root, moved: attach(child, to: root), isSwitching: root.isSwitching)
  }

  /// Makes `child` a graph of `root`'s tree, both roots, both stripes held: the waiters and
  /// queued propagations of `child` move to `root`, in their order. Returns the waiters to wake
  /// (they wait on `root` from now on).
  private static func attach(_ child: PropagationGraph, to root: PropagationGraph) -> [TurnWaiter] {
    child.parent = root
    root.size += child.size
    root.isSwitching = root.isSwitching || child.isSwitching
    var waiting: [TurnWaiter] = []
    for entry in child.state.leave() {
      switch entry {
      case .waiter(let id, _, _):
        let waiter = child.waiters.removeValue(forKey: id).unsafelyUnwrapped
        waiter.outcome = .moved
        waiting.append(waiter)
      case .job(let id):
        root.state.enqueue(job: id)
        root.jobs[id] = child.jobs.removeValue(forKey: id)
      }
    }
    child.holderContext = nil
    return waiting
  }

  /// At the end of a propagation that went before `later` (see
  /// ``ObservationContext/goesBefore``), joins the graph of its switch, `graph`, whose root it
  /// still holds, into the graph `later` holds, instead of giving that root back: `later` holds
  /// the joined graph from then on, and whoever waited for `graph` now waits for it. Giving the
  /// root back first and joining after would let a third propagation take `graph` in between,
  /// while the switch reads the other graph: it would run beside `later`, which writes what the
  /// switch reads (the changes this propagation left it to deliver).
  ///
  /// - Parameters:
  ///   - graph: The graph of a switch of the ending propagation, which deferred its join.
  ///   - context: The ending propagation's thread.
  ///   - later: The propagation it went before.
  ///   - isOwn: Whether the ending propagation took the turn of a root itself (one that a
  ///     queued propagation's runner took belongs to that runner's propagation).
  /// - Returns: Whether the graphs are one now; `false` if `later` no longer holds its root
  ///   (its propagation ended) or the ending propagation does not hold `graph`'s, changing
  ///   nothing.
  static func handOver(
    _ graph: PropagationGraph, by context: ObservationContext, to later: CrossedPropagation,
    isOwn: (PropagationGraph) -> Bool
  ) -> Bool {
    enum Step {
      case retry, refused
      case attached(moved: [TurnWaiter])
    }
    let me = ObjectIdentifier(context)
    let theirs = later.root
    while true {
      let mine = graph.root
      if mine === theirs { return true }
      let step = withStripes(of: mine, theirs) { () -> Step in
        // Joined into another meanwhile (by a thread that had to force a join): look again.
        guard mine.parent == nil else { return .retry }
        guard mine.state.holder == me, isOwn(mine), theirs.parent == nil,
          theirs.holderContext === later.context, theirs.state.progress == later.givenBack
        else { return .refused }
        return .attached(moved: attach(mine, to: theirs))
      }
      switch step {
      case .retry: continue
      case .refused: return false
      case .attached(let moved):
        // Woken after unlocking: they wait on `theirs`, whose stripe they take at once.
        for waiter in moved { waiter.semaphore.signal() }
        return true
      }
    }
  }

  /// Runs `body` with the stripes of `a` and `b` held, taken in the order of their indices (one
  /// lock when they share a stripe), so that two threads locking two graphs never deadlock.
  private static func withStripes<Result>(
    of a: PropagationGraph, _ b: PropagationGraph, _ body: () -> Result
  ) -> Result {
    let isShared = a.stripe == b.stripe
    let locks = a.stripe < b.stripe ? (a.lock, b.lock) : (b.lock, a.lock)
    locks.0.lock()
    if !isShared { locks.1.lock() }
    defer {
      if !isShared { locks.1.unlock() }
      locks.0.unlock()
    }
    return body()
  }
}

/// One thread waiting for a graph's turn.
final class TurnWaiter {
  enum Outcome: Equatable {
    case waiting
    /// The turn was handed to this waiter.
    case granted
    /// The turn is free: take it if it still is.
    case woken
    /// The graph joined another: wait on the new root.
    case moved
    /// No progress for a whole turn timeout: the progress it saw.
    case gaveUp(Progress)
    /// Made to stop waiting by a thread that breaks a cycle of waits it is part of (see
    /// ``TurnWaits/stopWaiting(_:)``).
    case evicted
  }

  let id = TurnWaiter.nextID()
  let context: ObservationContext
  let semaphore = DispatchSemaphore(value: 0)
  /// Guarded by the stripe of the graph it waits on.
  @exclusivity(unchecked) var outcome = Outcome.waiting

  init(context: ObservationContext) {
    self.context = context
  }

  private static let idLock = Lock()
  nonisolated(unsafe) private static var lastID: UInt = 0

  static func nextID() -> UInt {
    idLock.withLock {
      lastID &+= 1
      return lastID
    }
  }

  /// Waits until the turn is granted or the graph joined another, or until a whole
  /// ``turnTimeout`` passes in which the holder neither gave the turn back nor started a round:
  /// then it gives up.
  func wait(in root: PropagationGraph, progressSeen: Progress) -> Outcome {
    var progressSeen = progressSeen
    while true {
      let isSignalled = semaphore.wait(timeout: .now() + turnTimeout) == .success
      let lock = root.lock
      lock.lock()
      defer { lock.unlock() }
      if outcome == .woken {
        // Taken by another thread first: wait on, at the head of the queue.
        guard root.takeWokenLocked(self) else {
          outcome = .waiting
          continue
        }
        outcome = .granted
      }
      if outcome != .waiting { return outcome }
      guard !isSignalled else { continue }
      if root.progressLocked != progressSeen {
        progressSeen = root.progressLocked
        continue
      }
      root.forgetWaiterLocked(id)
      outcome = .gaveUp(progressSeen)
      return outcome
    }
  }
}

/// What a waiter watches to tell a slow holder from a stuck one.
struct Progress: Equatable {
  var givenBack: UInt
  var holderRounds: UInt
}

/// How long a waiter waits with no progress (see ``Progress``) before it gives up: 100 ms, or
/// the value of the `PROPERTY_OBSERVATION_TURN_TIMEOUT_MS` environment variable, read once. CI
/// raises it under ThreadSanitizer, where a holder on a loaded machine can go 100 ms without
/// starting a round although nothing blocks it.
let turnTimeoutMilliseconds: Int = {
  if let raw = getenv("PROPERTY_OBSERVATION_TURN_TIMEOUT_MS"),
    let milliseconds = Int(String(cString: raw)), milliseconds > 0
  {
    return milliseconds
  }
  return 100
}()

/// ``turnTimeoutMilliseconds`` as a dispatch interval.
var turnTimeout: DispatchTimeInterval {
  .milliseconds(turnTimeoutMilliseconds)
}

/// How many propagations the current thread has queued behind another thread's instead of
/// waiting for a turn, for the package's tests: a set during which this did not change took
/// effect before it returned.
package var propagationsQueuedByThisThread: UInt {
  ObservationContext.current.queuedPropagations
}

/// The waits between threads, for the cycle check: which graph each waiting thread waits for.
enum TurnWaits {
  /// Guards every context's `waitingFor`. Taken before any graph's stripe, never after one.
  static let lock = Lock()

  /// Whether `waiter` waiting for `holder` would close a cycle: `holder` waits, through a chain
  /// of holders, for a turn `waiter` holds. Returns the thread of the chain that waits for
  /// `waiter`, or `nil` if there is no cycle. Called with ``lock`` held.
  static func cycle(
    from holder: ObservationContext, to waiter: ObservationContext
  ) -> ObservationContext? {
    var current = holder
    // A chain longer than the threads that can wait at once is not possible; the bound only
    // guards against a chain read while it changes.
    for _ in 0..<256 {
      guard let graph = current.waitingFor else { return nil }
      let root = graph.root
      let lock = root.lock
      lock.lock()
      let next = root.holderContextLocked
      lock.unlock()
      if next === waiter { return current }
      guard let next, next !== current else { return nil }
      current = next
    }
    return nil
  }

  /// Makes the thread of `context` stop waiting, as if it had found the cycle itself: it queues
  /// its propagation. Returns `false` if it was no longer waiting (it stopped already and has yet to
  /// clear its wait). Called with ``lock`` held.
  static func stopWaiting(_ context: ObservationContext) -> Bool {
    guard let graph = context.waitingFor, let waiter = context.waiter else { return false }
    let root = graph.root
    let lock = root.lock
    lock.lock()
    defer { lock.unlock() }
    guard waiter.outcome == .waiting else { return false }
    root.forgetWaiterLocked(waiter.id)
    waiter.outcome = .evicted
    waiter.semaphore.signal()
    return true
  }
}
