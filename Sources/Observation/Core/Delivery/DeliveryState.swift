/// Which thread delivers an observable's rounds, and what each event asks its owner to do.
///
/// Only the holder of the observable's graph turn stores values into it (see
/// ``PropagationGraph``), so every round of an observable is delivered by the thread whose
/// propagation made the change. What is left to decide is re-entrance: a set or registration
/// made inside a callback of a round of the same observable must not run inside that round.
///
/// The state is non-generic and holds no user values: ``ReadOnlyObservable`` feeds it each event
/// under its lock, gets back an action, and performs the action after unlocking. The rules:
/// - A set that finds the observable idle makes its thread the deliverer, which delivers the
///   round, then the work queued meanwhile, in arrival order, and gives the role back.
/// - A set by the deliverer, inside a callback of its round, is queued behind the round, and
///   delivered before the outermost set returns. A set by another thread meanwhile comes only
///   after a join that could not wait (two propagations overlap then, see the Threading
///   article): it is queued behind the round too, and the deliverer delivers it.
/// - Registrations made during a round are queued too, so a round's list never changes under
///   it; a registration with `.initial` takes the role while `.initial` runs, so that a change
///   made inside `.initial` reaches the new registration after it.
/// - Removals take effect at once when no round runs or on the delivering thread (marked, then
///   compacted); from another thread during a round, before the next round.
struct DeliveryState {
  enum Role: Equatable {
    case idle
    case delivering(ThreadID)
  }

  private(set) var role = Role.idle

  enum SetAction: Equatable {
    /// The setting thread is now the deliverer: run the round, then drain the queue.
    case deliver
    /// The setting thread is now the deliverer, but removals from other threads wait: queue the
    /// change, then drain the queue.
    case enqueueAndDrain
    /// This thread is delivering (a set inside a callback): queue the change; the thread
    /// delivers it after the current round, before its outermost set returns. Or another thread
    /// is (see ``set(on:queueIsEmpty:)``): it delivers the change after its round.
    case enqueue
  }

  /// A value was stored on `thread`, which holds the graph's turn. `queueIsEmpty` tells whether
  /// no work waits for the next round.
  mutating func set(on thread: ThreadID, queueIsEmpty: Bool = true) -> SetAction {
    switch role {
    case .idle:
      role = .delivering(thread)
      return queueIsEmpty ? .deliver : .enqueueAndDrain
    case .delivering:
      // On another thread, only after a join that could not wait (see
      // `PropagationGraph.join(_:)`): that thread's propagation goes on in a graph whose turn
      // this one holds now, and it delivers this change after its round, as its own.
      return .enqueue
    }
  }

  enum RegistrationAction: Equatable {
    /// No round runs: add the entry to the list now.
    case append
    /// A round runs: queue the entry (it sees only later changes, and keeps its place in the
    /// order) and send `.initial`, if asked, at once.
    case enqueue
    /// A registration with `.initial` on an idle observable with nothing queued: this thread is
    /// the deliverer now; add the entry to the list now (it would be the drain's first work),
    /// send `.initial`, then drain the queue. No round reaches the entry before `.initial`:
    /// every change this thread makes meanwhile waits for the drain.
    case appendAndDeliverInitial
    /// The same with work queued: queue the entry behind it, send `.initial`, then drain.
    case enqueueAndDeliverInitial
  }

  /// A registration arrives on `thread`. `queueIsEmpty` tells whether no work waits for the
  /// next round.
  mutating func register(
    on thread: ThreadID, sendsInitial: Bool, queueIsEmpty: Bool = false
  ) -> RegistrationAction {
    guard role == .idle else { return .enqueue }
    guard sendsInitial else { return .append }
    role = .delivering(thread)
    return queueIsEmpty ? .appendAndDeliverInitial : .enqueueAndDeliverInitial
  }

  enum RemovalAction: Equatable {
    /// No round runs: remove the entries and release their closures now.
    case removeNow
    /// This thread is delivering: mark the entries so the round skips them; the deliverer
    /// compacts them after the round (a marked closure may be running right now).
    case mark
    /// Another thread is delivering: remove before the deliverer's next round.
    case deferToNextRound
  }

  func remove(on thread: ThreadID) -> RemovalAction {
    switch role {
    case .idle: .removeNow
    case .delivering(thread): .mark
    case .delivering: .deferToNextRound
    }
  }

  /// The deliverer found nothing left to do and gives up the role.
  mutating func finish(on thread: ThreadID) {
    requireDeliverer(thread)
    role = .idle
  }

  /// Stops the program if `thread` is not the deliverer: only the deliverer may run rounds,
  /// drain the queue or walk the list without the lock.
  func requireDeliverer(_ thread: ThreadID) {
    guard case .delivering(let deliverer) = role, deliverer == thread else {
      preconditionFailure("Only the delivering thread may run rounds (role: \(role)).")
    }
  }
}
