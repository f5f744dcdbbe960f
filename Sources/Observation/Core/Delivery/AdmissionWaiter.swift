import Dispatch

/// A setter waiting to be admitted (see ``DeliveryState/admit(on:hasPriority:)``). Every
/// property is guarded by the observable's lock.
final class AdmissionWaiter {
  let thread: ThreadID
  /// When the setter started waiting (`DispatchTime` nanoseconds).
  let since = DispatchTime.now().uptimeNanoseconds
  /// Signalled only once the waiter has parked: a waiter that is still checking back sees that
  /// it is admitted itself, without a wake-up.
  let semaphore = DispatchSemaphore(value: 0)
  /// Set when the waiter stopped checking back and sleeps on `semaphore`; cleared when a
  /// deliverer wakes it, so that it is woken once per sleep.
  var isParked = false

  /// How many times a waiter checks back before it parks: about as long as a few rounds take,
  /// so that a wait that ends within them costs no sleep and wake-up.
  static var checksBeforeParking: Int { 32 }

  init(thread: ThreadID) {
    self.thread = thread
  }
}
