import Dispatch

/// A setter waiting for its change to be delivered, or for its turn to deliver it. Every
/// property is guarded by the observable's lock.
final class TurnWaiter {
  let thread: ThreadID
  /// Whether the setter must deliver its change itself: it runs on the main queue of one of the
  /// observable's main-actor lanes, whose callbacks must have run when its set returns, and they
  /// run inline only in a round on that queue; or its change is a derived value's, whose round
  /// belongs to the propagation of the setter's thread.
  let deliversItself: Bool
  /// Signalled only once the waiter has parked: a waiter that is still checking back sees the
  /// outcome itself, without a wake-up.
  let semaphore = DispatchSemaphore(value: 0)
  /// Set when another thread delivered this setter's change.
  private(set) var isDelivered = false
  /// Set when the waiter stopped checking back and sleeps on `semaphore`.
  var isParked = false

  /// How many times a waiter checks back before it parks: about as long as a few rounds for
  /// other threads take, so that a deliverer within its combining budget usually finds it still
  /// awake (see Benchmarks/README.md).
  static var checksBeforeParking: Int { 32 }

  init(thread: ThreadID, deliversItself: Bool) {
    self.thread = thread
    self.deliversItself = deliversItself
  }

  /// Its change was delivered: it may return. Returns whether it sleeps and must be woken by
  /// signalling `semaphore` (after unlocking).
  func markDelivered() -> Bool {
    isDelivered = true
    return isParked
  }
}
