/// Who delivers an observable's rounds, and what each event asks its owner to do.
///
/// The state is non-generic and holds no user values: ``ReadOnlyObservable`` feeds it each event
/// under its lock, gets back an action, and performs the action (calling callbacks, releasing
/// closures) after unlocking. Keeping the decisions here lets a test drive every decision about
/// who delivers, and when, without threads; where a callback runs is decided by its
/// registration's isolation (`CallbackIsolation`), and the order of main-actor and actor calls by
/// their lanes.
///
/// The rules:
/// - One thread at a time is the *deliverer*, and changes are delivered in the order they were
///   stored. A set that finds the observable idle makes its thread the deliverer. A set inside a
///   callback of this observable is queued and delivered by the deliverer (its own thread) after
///   the current round.
/// - A set from another thread while a round runs, outside any callback (or a derived value's
///   change, which belongs to its setter's propagation, even inside one), waits to be *admitted*
///   before it stores its value: until nobody delivers. It then delivers its change itself. A
///   thread that keeps setting may store again before a waiting one is admitted, like a lock's
///   owner taking it again, but only for one budget (see ``CombiningBudget``): once a setter has
///   waited that long, the role is kept for it when the deliverer finishes. A setter on the main
///   queue of one of the observable's main-actor lanes has the role kept for it at once, so a UI
///   thread waits only for the current deliverer. A setter that sees no progress for a whole
///   turn timeout while it waits stops waiting, stores its change and leaves it to whoever
///   delivers.
/// - So the only changes queued are the deliverer's own (sets inside its callbacks) and those
///   nobody waits for (below, and a setter's that stopped waiting). A deliverer never waits: a
///   change queued before one of its own re-entrant changes it delivers itself, and it hands the
///   role over only when none of its own is left.
/// - A set made inside a callback (of any observable) while another thread delivers never waits,
///   since waiting there could close a cycle of waits between threads: nobody waits for its
///   change, which the deliverer delivers while its *combining budget* lasts (a number of
///   rounds and a time since its first such round, whichever ends first; see
///   ``CombiningBudget``), or else the library's delivery queue does, taking the role when the
///   change reaches the head. A deliverer inside a callback does not combine: it could not keep
///   another thread's change a propagation of its own.
/// - Registrations made during a round are queued too, so a round's list never changes under
///   it. A registration with `.initial` from the delivering thread gets `.initial` at once; from
///   any other thread, idle or not, it gets `.initial` at once as well, on its own thread, and is
///   *gated*: it never holds the role while `.initial` runs; the deliverer keeps the rounds it
///   runs meanwhile for it and delivers them once `.initial` has returned, before any later
///   round. Registrations made while a gate is closed queue behind it, keeping their order. The
///   rounds kept for closed gates count against the queue's bound: once
///   ``HeldRegistrations/backlogLimit`` are kept, a deliverer that may wait (one not inside a
///   callback) waits for a gate to open before its next round, for one turn timeout at a time.
/// - Removals take effect at once when no round runs or on the delivering thread; from another
///   thread during a round they take effect before the next round.
struct DeliveryState {
  enum Role: Equatable {
    case idle
    case delivering(ThreadID)
    /// Handed to the library's delivery queue, whose job has not started yet.
    case handedToQueue
  }

  /// Who made a queued change. Nobody waits for one: a setter that must wait does so before it
  /// stores (see ``admit(on:hasPriority:)``).
  enum Setter: Equatable {
    /// A set on the deliverer's thread, inside its callbacks (or one queued behind registrations
    /// waiting at a gate): the deliverer delivers it before its outermost set returns.
    case thread(ThreadID)
    /// A set inside a callback while another thread delivered: it never waits, so nobody waits
    /// for it.
    case nobody
    /// Its setter stopped waiting to be admitted: whoever delivers delivers it.
    case gaveUp
  }

  private(set) var role = Role.idle {
    didSet { combinedRounds = 0 }
  }

  /// Registrations whose `.initial` still runs on their own thread.
  private(set) var closedGates = 0

  /// Rounds delivered and hand-overs made since the observable was made: a setter whose wait to
  /// be admitted times out tells a slow deliverer (this moved) from a stuck one (it did not).
  private(set) var progress: UInt = 0

  /// How long a deliverer delivers the changes other threads set inside callbacks before it
  /// hands the role to the delivery queue; its time is also how long a setter may wait to be
  /// admitted before the role is kept for it.
  struct CombiningBudget: Equatable {
    /// At most this many rounds for other threads per turn.
    var rounds: Int
    /// And no new one once this long has passed since the first of them.
    var nanoseconds: UInt64

    /// 64 rounds or 200 µs: long enough that a burst of such changes is delivered without a
    /// hop to the delivery queue (a thread wake-up costs more than a round of ten observers), and
    /// that a thread that keeps setting spares most wake-ups; short enough that any waiting
    /// setter, a UI thread's included, waits far less than a frame (see Benchmarks/README.md).
    static var standard: CombiningBudget { CombiningBudget(rounds: 64, nanoseconds: 200_000) }
  }

  /// The thread the role is kept for once nobody delivers: a setter that waited a whole budget
  /// to be admitted (see ``admit(on:hasPriority:)``).
  private(set) var reservedFor: ThreadID?

  /// Rounds the deliverer has delivered for other threads since it took the role.
  private(set) var combinedRounds = 0
  /// When the first of them was delivered (`DispatchTime` nanoseconds).
  private var combiningSince: UInt64 = 0

  // MARK: - Events

  enum SetAction: Equatable {
    /// The setting thread is now the deliverer: run the round, then drain the queue.
    case deliver
    /// The setting thread is now the deliverer, but registrations are queued (behind a gate)
    /// that come before the change: queue it as the thread's own, then drain the queue.
    case enqueueAndDrain
    /// This thread is delivering (a set inside a callback): queue the change as its own; the
    /// thread delivers it after the current round, before its outermost set returns.
    case enqueue
    /// Another thread is delivering and this set is made inside a callback, where waiting could
    /// close a cycle of waits between threads: queue the change for ``Setter/nobody``.
    case enqueueWithoutWaiting
    /// Another thread is delivering and this setter stopped waiting to be admitted: queue the
    /// change for ``Setter/gaveUp``, without waiting.
    case enqueueGivenUp
  }

  enum AdmissionAction: Equatable {
    /// Store the value and set it (``set(on:insideCallback:queueIsEmpty:gaveUpWaiting:)``),
    /// without unlocking in between.
    case store
    /// Another thread delivers, or the role is kept for another setter: wait, without the lock,
    /// until the deliverer finishes, then ask again.
    case waitForRole
  }

  /// A set on `thread`, outside any callback or a derived value's change, asks to store its
  /// value. `hasPriority` tells that the thread runs on the main queue of one of the
  /// observable's main-actor lanes, whose callbacks must have run, inline, when its set
  /// returns: it goes before any setter waiting, and the role is kept for it at once, so that a
  /// UI thread waits only for the current deliverer, never behind setters that keep setting.
  mutating func admit(on thread: ThreadID, hasPriority: Bool = false) -> AdmissionAction {
    if role == .idle && reservedFor == nil { return .store }
    let isFree: Bool
    switch role {
    case .idle: isFree = reservedFor == nil || reservedFor == thread || hasPriority
    case .delivering(thread): isFree = true
    case .delivering, .handedToQueue: isFree = false
    }
    guard isFree else {
      if hasPriority { reservedFor = thread }
      return .waitForRole
    }
    if reservedFor == thread { reservedFor = nil }
    return .store
  }

  /// A setter waiting to be admitted on `thread` stopped waiting (its wait timed out with no
  /// progress): the role is no longer kept for it.
  mutating func stopWaitingForAdmission(on thread: ThreadID) {
    if reservedFor == thread { reservedFor = nil }
  }

  /// A value was stored on `thread`: by a set admitted (see ``admit(on:hasPriority:)``), which
  /// finds nobody delivering or its own thread; by a set inside a callback (`insideCallback`),
  /// which is never admitted, since waiting there could close a cycle of waits between threads;
  /// or by a setter that stopped waiting to be admitted (`gaveUpWaiting`). `queueIsEmpty` tells
  /// whether nothing (a registration behind a gate, say) is queued.
  mutating func set(
    on thread: ThreadID, insideCallback: Bool = false, queueIsEmpty: Bool = true,
    gaveUpWaiting: Bool = false
  ) -> SetAction {
    switch role {
    case .idle:
      role = .delivering(thread)
      return queueIsEmpty ? .deliver : .enqueueAndDrain
    case .delivering(thread):
      return .enqueue
    case .delivering, .handedToQueue:
      if gaveUpWaiting { return .enqueueGivenUp }
      precondition(insideCallback, "A set outside callbacks stores only once admitted.")
      return .enqueueWithoutWaiting
    }
  }

  enum ChangeAction: Equatable {
    /// Deliver the change on this thread: its own, one whose setter stopped waiting, or one
    /// nobody waits for.
    case deliver
    /// The role has moved to the library's delivery queue: start its job.
    case handOverToQueue
    /// Let go of the closures removed so far, outside the lock, then reach the change again:
    /// the registrations they own (a token in a closure) must have ended before another thread
    /// can take the role.
    case releaseClosuresFirst
    /// The rounds kept for closed gates reached their bound: wait, without the lock, until a
    /// gate opens or a turn timeout passes, then reach the change again (`waitedForGates`).
    case waitForGates
  }

  /// The deliverer on `thread` reached a queued change made by `setter`. The other arguments are
  /// facts the owner reads only when asked:
  /// - `onQueue`: the deliverer is the delivery queue's job;
  /// - `hasClosuresToRelease`: removed closures wait to be let go;
  /// - `heldBacklogIsFull`: ``HeldRegistrations/backlogLimit`` rounds are kept for closed gates;
  /// - `mayWait`: the deliverer is not inside a callback, where no wait is allowed;
  /// - `waitedForGates`: the last ``ChangeAction/waitForGates`` timed out with every gate still
  ///   closed (one round is delivered, then the deliverer waits again);
  /// - `ownChangeQueued`: one of the deliverer's own changes is queued behind;
  /// - `mayCombine`: the deliverer can deliver another thread's change as a propagation of its
  ///   own (it is not inside a callback, a flush or a transaction's commit);
  /// - `now`: the time, read only when the budget is consulted.
  mutating func reachChange(
    by setter: Setter,
    on thread: ThreadID,
    onQueue: Bool,
    hasClosuresToRelease: Bool = false,
    heldBacklogIsFull: @autoclosure () -> Bool = false,
    mayWait: @autoclosure () -> Bool = true,
    waitedForGates: Bool = false,
    ownChangeQueued: @autoclosure () -> Bool,
    mayCombine: @autoclosure () -> Bool = true,
    now: @autoclosure () -> UInt64,
    budget: CombiningBudget = .standard
  ) -> ChangeAction {
    requireDeliverer(thread)
    if !waitedForGates && heldBacklogIsFull() && mayWait() { return .waitForGates }
    if setter != .thread(thread) && hasClosuresToRelease { return .releaseClosuresFirst }
    switch setter {
    case .thread(thread), .gaveUp: return .deliver
    case .nobody where onQueue: return .deliver
    case .nobody:
      // The deliverer never waits, so it delivers up to its own change whatever the budget.
      if ownChangeQueued() || mayCombineAnother(mayCombine(), now(), budget) { return .deliver }
      role = .handedToQueue
      progress &+= 1
      return .handOverToQueue
    case .thread:
      preconditionFailure("Another thread's change was queued for it: it should have waited.")
    }
  }

  /// Whether the budget allows one more round for another thread, and counts it if so.
  private mutating func mayCombineAnother(
    _ mayCombine: @autoclosure () -> Bool, _ now: @autoclosure () -> UInt64,
    _ budget: CombiningBudget
  ) -> Bool {
    guard combinedRounds < budget.rounds && mayCombine() else { return false }
    let time = now()
    if combinedRounds == 0 { combiningSince = time }
    guard time &- combiningSince < budget.nanoseconds else { return false }
    combinedRounds += 1
    return true
  }

  /// The deliverer delivered a round.
  mutating func didDeliverRound() {
    progress &+= 1
  }

  /// The delivery queue's job starts on `thread` and takes the role it was handed.
  mutating func adoptQueuedRole(on thread: ThreadID) {
    precondition(
      role == .handedToQueue, "The delivery queue started without being handed the role.")
    role = .delivering(thread)
  }

  /// A waiting setter's turn timed out, `progressSeen` being the progress when it started the
  /// timeout: whether it stops waiting, leaving its changes to whoever delivers (no round was
  /// delivered meanwhile: the deliverer may be a callback waiting for this very thread, so
  /// waiting on could deadlock however long the queue), or waits one more timeout (rounds are
  /// delivered: the turn is slow, not stuck), updating `progressSeen`.
  func turnTimedOut(progressSeen: inout UInt) -> Bool {
    guard progress == progressSeen else {
      progressSeen = progress
      return false
    }
    return true
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
    case .delivering(thread): .mark
    case .delivering, .handedToQueue: .deferToNextRound
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
    case .handedToQueue:
      return .leaveToDeliverer
    }
  }

  /// The deliverer found nothing left to do and gives up the role. `oldestWaiting` is the setter
  /// that has waited longest to be admitted, if any, with the time its wait started: once that
  /// is a whole budget ago, the role is kept for it. Returns the thread to wake: the one the role
  /// is kept for, or else the oldest waiting setter; `nil` when nobody waits.
  @discardableResult
  mutating func finish(
    on thread: ThreadID,
    oldestWaiting: (thread: ThreadID, since: UInt64)? = nil,
    now: @autoclosure () -> UInt64 = 0,
    budget: CombiningBudget = .standard
  ) -> ThreadID? {
    requireDeliverer(thread)
    role = .idle
    guard let oldestWaiting else { return nil }
    if reservedFor == nil && now() &- oldestWaiting.since >= budget.nanoseconds {
      reservedFor = oldestWaiting.thread
    }
    return reservedFor ?? oldestWaiting.thread
  }

  /// Stops the program if `thread` is not the deliverer: only the deliverer may run rounds,
  /// drain the queue or walk the list without the lock.
  func requireDeliverer(_ thread: ThreadID) {
    guard case .delivering(let deliverer) = role, deliverer == thread else {
      preconditionFailure("Only the delivering thread may run rounds (role: \(role)).")
    }
  }
}
