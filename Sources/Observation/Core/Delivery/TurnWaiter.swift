import Dispatch

/// A setter waiting to be admitted (see ``DeliveryState/admit(on:deliversItself:)``), for its
/// change to be delivered, or for its turn to deliver it. Every property is guarded by the
/// observable's lock.
final class TurnWaiter {
  let thread: ThreadID
  /// Signalled only once the waiter has parked: a waiter that is still checking back sees the
  /// outcome itself, without a wake-up.
  let semaphore = DispatchSemaphore(value: 0)
  /// Set when another thread delivered this setter's change.
  private(set) var isDelivered = false
  /// Set when the waiter stopped checking back and sleeps on `semaphore`.
  var isParked = false
  /// When a setter waiting to be admitted started waiting (`DispatchTime` nanoseconds).
  var since: UInt64 = 0

  /// How many times a waiter checks back before it parks: about as long as a few rounds take,
  /// so that a wait that ends within them (the deliverer finishing, or reaching the change)
  /// costs no sleep and wake-up.
  static var checksBeforeParking: Int { 32 }

  init(thread: ThreadID) {
    self.thread = thread
  }

  /// Its change was delivered: it may return. Returns whether it sleeps and must be woken by
  /// signalling `semaphore` (after unlocking).
  func markDelivered() -> Bool {
    isDelivered = true
    return isParked
  }
}
