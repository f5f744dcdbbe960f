/// Who delivers an observable's rounds, and what each event asks its owner to do.
///
/// The state is non-generic and holds no user values: ``ReadOnlyObservable`` feeds it each event
/// under its lock, gets back an action, and performs the action (calling callbacks, releasing
/// closures) after unlocking. Keeping the decisions here makes every rule of
/// <doc:Threading> a line of code that a test can drive without threads.
///
/// The rules:
/// - One thread at a time is the *deliverer*, and changes are delivered in the order they were
///   stored. A set that finds the observable idle makes its thread the deliverer. A set inside a
///   callback of this observable is queued and delivered by the deliverer (its own thread) after
///   the current round.
/// - A set from another thread while a round runs is stored and queued, and the setting thread
///   waits until its change has been delivered. When the change reaches the head of the queue
///   the deliverer delivers it for its setter while its *combining budget* lasts (a number of
///   rounds and a time since its first round for another thread, whichever ends first; see
///   ``CombiningBudget``), and hands the setter the role once the budget is spent, so no thread
///   delivers an unbounded stream of other threads' changes. A deliverer inside a callback
///   does not combine: it could not keep another thread's change a propagation of its own. A
///   setter on the main queue of one
///   of the observable's main-actor lanes always gets the role: its main-actor callbacks must
///   have run, inline, when its set returns.
/// - A deliverer never waits: a change queued before one of its own re-entrant changes it
///   delivers itself, budget or not, and it hands the role over only when none of its own is
///   left.
/// - A set made inside a callback (of any observable) while another thread delivers never waits,
///   since waiting there could close a cycle of waits between threads: nobody waits for its
///   change, which the deliverer delivers within its budget, or else the library's delivery
///   queue does, taking the role when the change reaches the head.
/// - A waiting setter that sees no round delivered for a short while (a callback may be waiting
///   for that very thread) stops waiting; the deliverer delivers its change.
/// - Registrations made during a round are queued too, so a round's list never changes under
///   it. A registration with `.initial` from the delivering thread gets `.initial` at once; from
///   any other thread, idle or not, it gets `.initial` at once as well, on its own thread, and is
///   *gated*: it never holds the role while `.initial` runs; the deliverer keeps the rounds it
///   runs meanwhile for it and delivers them once `.initial` has returned, before any later
///   round. Registrations made while a gate is closed queue behind it, keeping their order.
/// - Removals take effect at once when no round runs or on the delivering thread; from another
///   thread during a round they take effect before the next round.
struct DeliveryState: Equatable {
  enum Role: Equatable {
    case idle
    case delivering(ThreadID)
  }

  private(set) var role = Role.idle {
    didSet { combinedRounds = 0 }
  }

  /// Registrations whose `.initial` still runs on their own thread.
  private(set) var closedGates = 0

  /// How long a deliverer delivers other threads' changes for them before handing the role on.
  struct CombiningBudget: Equatable {
    /// At most this many rounds for other threads per turn.
    var rounds: Int
    /// And no new one once this long has passed since the first of them.
    var nanoseconds: UInt64

    /// 64 rounds or 200 µs: long enough that setters on several threads mostly return without a
    /// hand-over (a thread wake-up costs more than a round of ten observers), short enough that a
    /// UI thread's set waits far less than a frame for the changes queued before its own (see
    /// Benchmarks/README.md).
    static var standard: CombiningBudget { CombiningBudget(rounds: 64, nanoseconds: 200_000) }
  }

  /// Rounds the deliverer has delivered for other threads since it took the role.
  private(set) var combinedRounds = 0
  /// When the first of them was delivered (`DispatchTime` nanoseconds).
  private var combiningSince: UInt64 = 0

  // MARK: - Events

  enum SetAction: Equatable {
    /// The setting thread is now the deliverer: run the round, then drain the queue.
    case deliver
    /// This thread is delivering (a set inside a callback): queue the change; the thread
    /// delivers it after the current round, before its outermost set returns.
    case enqueue
    /// Another thread is delivering: queue the change and wait for the turn to deliver it.
    case enqueueAndWait
  }

  mutating func set(on thread: ThreadID) -> SetAction {
    switch role {
    case .idle:
      role = .delivering(thread)
      return .deliver
    case .delivering(let deliverer):
      return deliverer == thread ? .enqueue : .enqueueAndWait
    }
  }

  enum ChangeAction: Equatable {
    /// Deliver the change on this thread: its own, one whose setter stopped waiting, or one
    /// nobody waits for.
    case deliver
    /// Deliver the change on this thread for its setter, which waits, then let the setter
    /// return: the change has been delivered.
    case deliverFor(ThreadID)
    /// The role has moved to the change's setter, which waits for it: wake it up.
    case handOver(to: ThreadID)
    /// The role has moved to the library's delivery queue: start its job.
    case handOverToQueue
  }

  /// The deliverer reached a queued change made by `setter` (`nil`: a set inside a callback
  /// while another thread delivered, which nobody waits for; ``ThreadID/anyDeliverer``: a
  /// setter that stopped waiting). `onQueue` tells whether the deliverer is the delivery queue's
  /// job; `ownChangeQueued` whether one of the deliverer's own changes is queued behind;
  /// `setterDeliversItself` whether the setter must deliver its change on its own thread (the
  /// main thread, for main-actor callbacks that must run before its set returns); `mayCombine`
  /// whether the deliverer can deliver another thread's change as a propagation of its own (it
  /// is not inside a callback, a flush or a transaction's commit); `now` the time, read only
  /// when the budget is consulted.
  mutating func reachChange(
    by setter: ThreadID?,
    on thread: ThreadID,
    onQueue: Bool,
    ownChangeQueued: @autoclosure () -> Bool,
    setterDeliversItself: @autoclosure () -> Bool = false,
    mayCombine: @autoclosure () -> Bool = true,
    now: @autoclosure () -> UInt64,
    budget: CombiningBudget = .standard
  ) -> ChangeAction {
    requireDeliverer(thread)
    if setter == thread || setter == .anyDeliverer || (setter == nil && onQueue) {
      return .deliver
    }
    if ownChangeQueued() {
      // The deliverer never waits, so it delivers up to its own change whatever the budget.
      return setter.map { .deliverFor($0) } ?? .deliver
    }
    if let setter, setterDeliversItself() {
      // A main-thread setter whose main-actor callbacks must run before its set returns.
      role = .delivering(setter)
      return .handOver(to: setter)
    }
    if combinedRounds < budget.rounds && mayCombine() {
      let time = now()
      if combinedRounds == 0 { combiningSince = time }
      if time &- combiningSince < budget.nanoseconds {
        combinedRounds += 1
        return setter.map { .deliverFor($0) } ?? .deliver
      }
    }
    guard let setter else {
      role = .delivering(.deliveryQueue)
      return .handOverToQueue
    }
    precondition(setter != thread, "A deliverer handed the turn to itself.")
    role = .delivering(setter)
    return .handOver(to: setter)
  }

  /// The delivery queue's job starts on `thread` and takes the role it was handed.
  mutating func adoptQueuedRole(on thread: ThreadID) {
    precondition(
      role == .delivering(.deliveryQueue),
      "The delivery queue started without being handed the role.")
    role = .delivering(thread)
  }

  /// Whether `thread` holds the role (a waiting setter checks this when its wait times out).
  func isDeliverer(_ thread: ThreadID) -> Bool {
    role == .delivering(thread)
  }

  enum RegistrationAction: Equatable {
    /// Nothing runs and nothing is queued: add the entry to the list now.
    case append
    /// This thread is delivering, or nothing runs but an earlier registration is still queued
    /// behind a gate: queue the entry (it sees only later changes, and keeps its place in the
    /// order) and send `.initial`, if asked, at once.
    case enqueue
    /// A registration with `.initial`: queue the entry behind a closed gate and send `.initial`
    /// here, without taking the deliverer role, so that another thread's round (a derived
    /// value's source feeding it, say) is never held up by it; then open the gate with
    /// ``openGate(on:)``.
    case enqueueGated
  }

  mutating func register(on thread: ThreadID, sendsInitial: Bool) -> RegistrationAction {
    if case .delivering(let deliverer) = role, deliverer == thread { return .enqueue }
    guard sendsInitial else {
      return role == .idle && closedGates == 0 ? .append : .enqueue
    }
    closedGates += 1
    return .enqueueGated
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
    case .delivering(let deliverer): deliverer == thread ? .mark : .deferToNextRound
    }
  }

  enum GateAction: Equatable {
    /// Nobody delivers and the gate missed rounds: this thread becomes the deliverer and catches
    /// the entry up.
    case catchUp
    /// Nobody delivers and the gate missed nothing: apply the queued registrations up to the
    /// next closed gate, under the lock, without taking the role (no user code runs).
    case applyRegistrations
    /// The deliverer catches the entry up before its next round or when it finishes.
    case leaveToDeliverer
  }

  mutating func openGate(on thread: ThreadID, missedRounds: Bool) -> GateAction {
    precondition(closedGates > 0, "A gate was opened that was never closed.")
    closedGates -= 1
    switch role {
    case .idle:
      guard missedRounds else { return .applyRegistrations }
      role = .delivering(thread)
      return .catchUp
    case .delivering(let deliverer):
      precondition(deliverer != thread, "A gate was opened by its own deliverer.")
      return .leaveToDeliverer
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
