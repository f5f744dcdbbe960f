import Dispatch

// Turns: a setter from another thread waits for the deliverer to hand it the role (or to deliver
// its change for it), with a give-up that keeps a cycle of waits from deadlocking.

extension ReadOnlyObservable {
  static func isChange(_ event: PendingEvent, by thread: ThreadID) -> Bool {
    if case .change(_, _, .thread(thread)) = event { return true }
    return false
  }

  /// How long a setter waits for its turn before leaving its change to the deliverer.
  static var turnTimeout: DispatchTimeInterval { .milliseconds(100) }

  /// Entered with the lock held once the state moved the role to `setter` (waiting for it) or,
  /// for `nil`, to the delivery queue: wakes the one or starts the other, and returns with the
  /// lock released.
  func handOver(to setter: ThreadID?, released: inout [Callback]) {
    var next: TurnWaiter?
    if let setter {
      guard let index = waiters.firstIndex(where: { $0.thread == setter }) else {
        preconditionFailure("A queued change belongs to \(setter), which is not waiting.")
      }
      next = waiters.remove(at: index)
    }
    // Read under the lock; a waiter still checking back sees its turn itself.
    let isParked = next?.isParked ?? false
    lock.unlock()
    releaseOutsideLock(&released)
    if let next {
      if isParked { next.semaphore.signal() }
      return
    }
    let job = DeliveryQueueJob(observable: self)
    // A serial queue of its own, not a global queue: on Linux, libdispatch runs a global queue's
    // work only while fewer threads than cores are taken (blocked ones included) and adds a
    // thread about a second later, so behind a busy producer the job started 0.9 s late while
    // setters waited for it. A serial queue's work always gets a thread.
    DispatchQueue(label: "PropertyObservation.delivery").async { job.run() }
  }

  /// Waits, without the lock, until a deliverer hands this thread the role; returns `true` then,
  /// or `false` if another thread delivered the change for it.
  ///
  /// The waiter first checks back a few times, yielding the processor in between, since the
  /// deliverer usually reaches the change sooner than a sleep and wake-up would take; then it
  /// parks. If no round is delivered for a whole `turnTimeout`, the
  /// thread's queued changes are left to the deliverer and it returns `false`: waiting longer
  /// could deadlock when a callback on the delivering thread is itself waiting for this thread.
  func waitForTurn(_ waiter: TurnWaiter) -> Bool {
    for _ in 0..<TurnWaiter.checksBeforeParking {
      ThreadID.yieldProcessor()
      lock.lock()
      if let hasTurn = turn(of: waiter) {
        lock.unlock()
        return hasTurn
      }
      lock.unlock()
    }
    lock.lock()
    if let hasTurn = turn(of: waiter) {
      lock.unlock()
      return hasTurn
    }
    waiter.isParked = true
    var progressSeen = state.progress
    lock.unlock()
    while true {
      let isSignalled = waiter.semaphore.wait(timeout: .now() + Self.turnTimeout) == .success
      lock.lock()
      if let hasTurn = turn(of: waiter) {
        lock.unlock()
        return hasTurn
      }
      precondition(!isSignalled, "A setter was woken without its turn or its delivery.")
      guard state.turnTimedOut(progressSeen: &progressSeen) else {
        lock.unlock()
        continue
      }
      waiters.removeAll { $0 === waiter }
      pending.updateEach { event in
        guard case .change(let oldValue, let newValue, .thread(waiter.thread)) = event else {
          return event
        }
        return .change(old: oldValue, new: newValue, setter: .gaveUp)
      }
      lock.unlock()
      return false
    }
  }

  /// Waits, entered and left with the lock held, until the state admits this thread's set (see
  /// ``DeliveryState/admit(on:deliversItself:)``). Returns `false` if it stopped waiting instead:
  /// no round was delivered for a whole `turnTimeout`, so the deliverer may be a callback
  /// waiting for this very thread.
  ///
  /// Like a turn, it checks back a few times, yielding the processor, before it parks; a
  /// deliverer that finishes wakes the one waiter the state names.
  func waitForAdmission() -> Bool {
    let thread = ThreadID.current
    let deliversItself = hasMainActorLanes && mainActorLanes.contains { $0.isOnItsQueue }
    guard state.admit(on: thread, deliversItself: deliversItself) == .waitForRole else {
      return true
    }
    let waiter = TurnWaiter(thread: thread)
    waiter.since = DispatchTime.now().uptimeNanoseconds
    admissionWaiters.append(waiter)
    defer { admissionWaiters.removeAll { $0 === waiter } }
    for _ in 0..<TurnWaiter.checksBeforeParking {
      lock.unlock()
      ThreadID.yieldProcessor()
      lock.lock()
      if state.admit(on: thread) == .store { return true }
    }
    var progressSeen = state.progress
    while true {
      waiter.isParked = true
      lock.unlock()
      let isSignalled = waiter.semaphore.wait(timeout: .now() + Self.turnTimeout) == .success
      lock.lock()
      waiter.isParked = false
      if state.admit(on: thread) == .store { return true }
      if !isSignalled && state.turnTimedOut(progressSeen: &progressSeen) {
        state.stopWaitingForAdmission(on: thread)
        return false
      }
    }
  }

  /// Whether the wait of `waiter` is over, lock held: `true` if it holds the role now, `false`
  /// if another thread delivered its change, `nil` while it must wait.
  private func turn(of waiter: TurnWaiter) -> Bool? {
    if state.isDeliverer(waiter.thread) { return true }
    if waiter.isDelivered { return false }
    return nil
  }
}

/// The delivery queue's job for one observable, sent to a serial queue of its own.
///
/// Only an observable used from several threads hands changes to the queue, and an observable is
/// `Sendable` (so can be used from several threads) only when its value is: for the others this
/// job is never made. Its state is guarded by the observable's lock.
private struct DeliveryQueueJob<Value>: @unchecked Sendable {
  let observable: ReadOnlyObservable<Value>

  func run() {
    observable.runDeliveryQueueJob()
  }
}
