import Dispatch
import Foundation

/// Wakes the tasks waiting for something another thread does (work finishing, a thread reaching a
/// gate), so that they wait for the event itself instead of polling for it.
///
/// A polling wait wakes every millisecond, and each wake-up is a job for the few threads that the
/// tests' tasks share: on a busy machine, tens of polling tests crowd out the work they wait for.
/// A waiter here wakes when the event is signalled, or once at its deadline.
package final class Signal: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`: how many times the event was signalled, and who waits for the next one.
  private var generation = 0
  private var waiters: [@Sendable () -> Void] = []

  /// Creates a signal nobody waits for.
  package init() {}

  /// Wakes every task waiting now; each checks its condition again.
  package func signal() {
    lock.lock()
    generation += 1
    let waiters = self.waiters
    self.waiters.removeAll()
    lock.unlock()
    for waiter in waiters { waiter() }
  }

  /// Waits, without holding a thread, until `condition` holds, checking it at once and after each
  /// signal, or until `timeout` seconds have passed.
  ///
  /// - Returns: Whether `condition` held in time.
  package func wait(for timeout: Double, until condition: () -> Bool) async -> Bool {
    let deadline = DispatchTime.now() + timeout
    while true {
      let seen = lock.withLock { generation }
      if condition() { return true }
      guard DispatchTime.now() < deadline else { return condition() }
      await next(after: seen, before: deadline)
    }
  }

  /// Returns once the event is signalled after generation `seen` (at once if it already was), or
  /// at `deadline`.
  private func next(after seen: Int, before deadline: DispatchTime) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let once = ResumeOnce(continuation)
      let isSignalled = lock.withLock {
        guard generation == seen else { return true }
        waiters.append { once.resume(returning: ()) }
        return false
      }
      if isSignalled { return once.resume(returning: ()) }
      DispatchQueue.global().asyncAfter(deadline: deadline) { once.resume(returning: ()) }
    }
  }
}
