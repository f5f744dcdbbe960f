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
///   waits: when its change reaches the head of the queue the deliverer hands it the role, and it
///   delivers its own round. No thread delivers an unbounded stream of other threads' changes.
/// - A deliverer never waits: a change queued before one of its own re-entrant changes it
///   delivers itself (releasing that change's waiting setter), and it hands the role over only
///   when none of its own is left.
/// - A set made inside a callback (of any observable) while another thread delivers never waits,
///   since waiting there could close a cycle of waits between threads: its change goes to the
///   library's delivery queue, which takes the role when it reaches the head.
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

  private(set) var role = Role.idle

  /// Registrations whose `.initial` still runs on their own thread.
  private(set) var closedGates = 0

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

  /// The deliverer reached a change that `next` made and is waiting to deliver: the role moves
  /// to `next` now, even before it wakes up.
  mutating func handOver(from thread: ThreadID, to next: ThreadID) {
    requireDeliverer(thread)
    precondition(next != thread, "A deliverer handed the turn to itself.")
    role = .delivering(next)
  }

  /// The deliverer reached a change that nobody waits to deliver (made inside a callback while
  /// another thread delivered, or left by a setter whose wait timed out): the role moves to the
  /// library's delivery queue, which adopts it when its job starts.
  mutating func handOverToQueue(from thread: ThreadID) {
    requireDeliverer(thread)
    role = .delivering(.deliveryQueue)
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
