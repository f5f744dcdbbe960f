import Dispatch

// Turns: a setter from another thread waits for its turn to store (to be admitted), with a
// give-up that keeps a cycle of waits from deadlocking; and the deliverer hands the changes
// nobody waits for to the library's delivery queue.

extension ReadOnlyObservable {
  static func isChange(_ event: PendingEvent, by thread: ThreadID) -> Bool {
    if case .change(_, _, .thread(thread)) = event { return true }
    return false
  }

  /// How long a setter waits to be admitted, with no round delivered meanwhile, before it
  /// stores its change and leaves it to whoever delivers.
  static var turnTimeout: DispatchTimeInterval { .milliseconds(100) }

  /// Entered with the lock held once the state moved the role to the delivery queue: starts its
  /// job, and returns with the lock released.
  func handOverToQueue(released: inout [Callback]) {
    lock.unlock()
    releaseOutsideLock(&released)
    let job = DeliveryQueueJob(observable: self)
    // A serial queue of its own, not a global queue: on Linux, libdispatch runs a global queue's
    // work only while fewer threads than cores are taken (blocked ones included) and adds a
    // thread about a second later, so behind a busy producer the job started 0.9 s late while
    // setters waited for it. A serial queue's work always gets a thread.
    DispatchQueue(label: "PropertyObservation.delivery").async { job.run() }
  }

  /// Asks the state to admit a set on `thread` (see ``DeliveryState/admit(on:hasPriority:)``),
  /// entered and left with the lock held, and waits until it does. Returns whether the setter
  /// gave up instead: no round was delivered for a whole `turnTimeout`, so the deliverer may be
  /// a callback waiting for this very thread. An admitted set, the common case, makes no call.
  @inline(__always)
  func gaveUpWaitingForAdmission(on thread: ThreadID) -> Bool {
    delivery.state.admit(on: thread) == .waitForRole && !waitForAdmission(on: thread)
  }

  /// The waiting half of ``gaveUpWaitingForAdmission(on:)``: returns `false` if it gave up.
  ///
  /// It checks back a few times, yielding the processor, before it parks, since the deliverer
  /// usually finishes sooner than a sleep and wake-up would take; a deliverer that finishes wakes
  /// the one waiter the state names.
  private func waitForAdmission(on thread: ThreadID) -> Bool {
    let hasPriority =
      delivery.hasMainActorLanes && delivery.mainActorLanes.contains { $0.isOnItsQueue }
    guard delivery.state.admit(on: thread, hasPriority: hasPriority) == .waitForRole else {
      return true
    }
    let waiter = AdmissionWaiter(thread: thread)
    delivery.admissionWaiters.append(waiter)
    defer { delivery.admissionWaiters.removeAll { $0 === waiter } }
    for _ in 0..<AdmissionWaiter.checksBeforeParking {
      lock.unlock()
      ThreadID.yieldProcessor()
      lock.lock()
      if delivery.state.admit(on: thread, hasPriority: hasPriority) == .store { return true }
    }
    var progressSeen = delivery.state.progress
    while true {
      waiter.isParked = true
      lock.unlock()
      let isSignalled = waiter.semaphore.wait(timeout: .now() + Self.turnTimeout) == .success
      lock.lock()
      waiter.isParked = false
      if delivery.state.admit(on: thread, hasPriority: hasPriority) == .store { return true }
      if !isSignalled && delivery.state.turnTimedOut(progressSeen: &progressSeen) {
        delivery.state.stopWaitingForAdmission(on: thread)
        return false
      }
    }
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
