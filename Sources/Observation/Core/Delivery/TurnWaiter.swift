import Dispatch

/// A setter waiting for its turn to deliver its change; the deliverer signals it when handing
/// over the role.
final class TurnWaiter {
  let thread: ThreadID
  let semaphore = DispatchSemaphore(value: 0)
  /// Set, under the observable's lock, when another thread delivered this setter's change.
  var isDelivered = false

  init(thread: ThreadID) {
    self.thread = thread
  }
}
