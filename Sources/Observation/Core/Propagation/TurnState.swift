/// Who holds a graph's turn and who comes next: the decisions of ``PropagationGraph``, kept
/// apart so that a test can drive every one of them without threads.
///
/// It holds identities only, no user values and no objects: the holder's context and, in the
/// order they are served, the threads waiting for the turn and the propagations queued instead
/// of waiting (see ``PropagationGraph/queue(_:)``). The rules:
/// - The turn is free when nobody holds it; then nothing is queued either, since giving the
///   turn back hands it on while anything is queued.
/// - A waiter on the main queue goes before every other entry, so that a UI thread waits at most
///   for the propagation running now; every other entry is served in arrival order, so a thread
///   that keeps setting cannot pass a waiting one more than once.
/// - Giving the turn back hands it to the first entry: a waiting thread takes it over; a queued
///   propagation runs on the giving thread, which keeps the turn for it and gives it back again
///   after.
/// - Every give-back counts as progress (see ``TurnWaiter`` for what else does): a waiter that
///   sees none for a whole turn timeout gives up.
struct TurnState: Equatable {
  enum Entry: Equatable {
    /// A thread waiting for the turn: the waiter's id and its context's identity.
    case waiter(UInt, ObjectIdentifier)
    /// A propagation queued instead of waiting.
    case job(UInt)
  }

  /// The holder's context, by identity.
  private(set) var holder: ObjectIdentifier?
  /// Waiters and queued propagations, in the order they are served.
  private(set) var queue: [Entry] = []
  /// Counts give-backs.
  private(set) var progress: UInt = 0

  /// Whether nobody holds the turn (and so nothing waits for it).
  var isFree: Bool { holder == nil }

  /// Takes the turn for `context` if it is free.
  mutating func take(by context: ObjectIdentifier) -> Bool {
    guard holder == nil else { return false }
    holder = context
    return true
  }

  /// Queues a thread waiting for the turn, before every other entry if `first` (it runs on the
  /// main queue).
  mutating func enqueue(waiter id: UInt, of context: ObjectIdentifier, first: Bool) {
    precondition(holder != nil, "A thread waits for a turn nobody holds.")
    queue.insert(.waiter(id, context), at: first ? 0 : queue.count)
  }

  /// Queues a whole propagation that could not wait.
  mutating func enqueue(job id: UInt) {
    precondition(holder != nil, "A propagation was queued for a turn nobody holds.")
    queue.append(.job(id))
  }

  /// A waiter gave up: it leaves the queue.
  mutating func removeWaiter(_ id: UInt) {
    queue.removeAll {
      if case .waiter(id, _) = $0 { true } else { false }
    }
  }

  enum GiveBackAction: Equatable {
    /// Nothing is queued: the turn is free.
    case free
    /// The turn is this waiter's now: wake it.
    case grant(UInt)
    /// Run this queued propagation now, keeping the turn, then give it back again.
    case run(UInt)
  }

  /// The holder `context` gives the turn back.
  mutating func giveBack(by context: ObjectIdentifier) -> GiveBackAction {
    precondition(holder == context, "A turn was given back by a thread that does not hold it.")
    progress &+= 1
    guard !queue.isEmpty else {
      holder = nil
      return .free
    }
    switch queue.removeFirst() {
    case .waiter(let id, let waiting):
      holder = waiting
      return .grant(id)
    case .job(let id):
      return .run(id)
    }
  }

  /// The graph joined another one (see ``PropagationGraph``): returns its queue, which moves to
  /// the new root; its holder, if any, holds it only through the root from now on.
  mutating func leave() -> [Entry] {
    let entries = queue
    queue = []
    holder = nil
    return entries
  }
}
