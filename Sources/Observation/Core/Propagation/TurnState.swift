/// Who holds a graph's turn and who comes next: the decisions of ``PropagationGraph``, kept
/// apart so that a test can drive every one of them without threads.
///
/// It holds identities only, no user values and no objects: the holder's context and, in the
/// order they are served, the threads waiting for the turn and the propagations queued instead
/// of waiting (see ``PropagationGraph/queue(_:)``). The rules:
/// - The turn is free when nobody holds it; then nothing is queued either, since giving the
///   turn back hands it on while anything is queued.
/// - A waiter on the main queue goes before every other entry, so that a UI thread waits at most
///   for the propagation running now; every other entry is served in arrival order.
/// - Giving the turn back serves the first entry. A queued propagation runs on the giving
///   thread, which keeps the turn for it and gives it back again after. A waiting thread that
///   has waited a whole ``passingBudget`` takes the turn over; one that has waited less is only
///   woken, and the turn is free: a thread that keeps setting may take it again first, as a
///   lock's owner may, which spares a thread wake-up per set, but for one budget at most, so
///   nobody waits longer than the propagations ahead of it plus that budget.
/// - Every give-back counts as progress (see ``TurnWaiter`` for what else does): a waiter that
///   sees none for a whole turn timeout gives up.
struct TurnState: Equatable {
  enum Entry: Equatable {
    /// A thread waiting for the turn: the waiter's id, its context's identity, and when it
    /// started waiting (`DispatchTime` nanoseconds).
    case waiter(UInt, ObjectIdentifier, since: UInt64)
    /// A propagation queued instead of waiting.
    case job(UInt)
  }

  /// The holder's context, by identity.
  private(set) var holder: ObjectIdentifier?
  /// Waiters and queued propagations, in the order they are served.
  private(set) var queue: [Entry] = []
  /// Counts give-backs.
  private(set) var progress: UInt = 0

  /// How long a waiter may be passed by threads that find the turn free before the turn is
  /// handed to it: 200 µs, less than a thread wake-up costs a busy setter several times over, and
  /// far less than a frame.
  static var passingBudget: UInt64 { 200_000 }

  /// How many propagations `queue` holds.
  private var queuedJobs = 0

  /// Whether nobody holds the turn. A waiter that was woken may still be queued.
  var isFree: Bool { holder == nil }

  /// Takes the turn for `context` if it is free and no queued propagation waits for it: a
  /// woken waiter may be passed, a queued propagation (its setter has returned) never.
  mutating func take(by context: ObjectIdentifier) -> Bool {
    guard holder == nil && queuedJobs == 0 else { return false }
    holder = context
    return true
  }

  /// The waiter `id`, woken, takes the turn if it is still free, and leaves the queue.
  mutating func takeWoken(_ id: UInt, by context: ObjectIdentifier) -> Bool {
    guard holder == nil else { return false }
    holder = context
    removeWaiter(id)
    return true
  }

  /// Queues a thread waiting for the turn since `now`, before every other entry if `first` (it
  /// runs on the main queue).
  mutating func enqueue(
    waiter id: UInt, of context: ObjectIdentifier, first: Bool, now: UInt64
  ) {
    queue.insert(.waiter(id, context, since: now), at: first ? 0 : queue.count)
  }

  /// Queues a whole propagation that could not wait.
  mutating func enqueue(job id: UInt) {
    precondition(holder != nil, "A propagation was queued for a turn nobody holds.")
    queue.append(.job(id))
    queuedJobs += 1
  }

  /// A waiter gave up: it leaves the queue.
  mutating func removeWaiter(_ id: UInt) {
    queue.removeAll {
      if case .waiter(id, _, _) = $0 { true } else { false }
    }
  }

  enum GiveBackAction: Equatable {
    /// Nothing is queued: the turn is free.
    case free
    /// The turn is this waiter's now: wake it.
    case grant(UInt)
    /// The turn is free: wake this waiter, which takes it if it still finds it free.
    case wake(UInt)
    /// Run this queued propagation now, keeping the turn, then give it back again.
    case run(UInt)
  }

  /// The holder `context` gives the turn back; `now` is read only if anything is queued.
  mutating func giveBack(
    by context: ObjectIdentifier, now: @autoclosure () -> UInt64
  ) -> GiveBackAction {
    precondition(holder == context, "A turn was given back by a thread that does not hold it.")
    progress &+= 1
    guard let first = queue.first else {
      holder = nil
      return .free
    }
    switch first {
    case .waiter(let id, let waiting, let since):
      guard now() &- since >= Self.passingBudget else {
        holder = nil
        return .wake(id)
      }
      queue.removeFirst()
      holder = waiting
      return .grant(id)
    case .job(let id):
      queue.removeFirst()
      queuedJobs -= 1
      return .run(id)
    }
  }

  /// The graph joined another one (see ``PropagationGraph``): returns its queue, which moves to
  /// the new root; its holder, if any, holds it only through the root from now on.
  mutating func leave() -> [Entry] {
    let entries = queue
    queue = []
    queuedJobs = 0
    holder = nil
    return entries
  }
}
