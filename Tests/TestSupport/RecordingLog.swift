import Dispatch
import Foundation

/// A thread-safe, ordered log of what a test observed.
///
/// Tests assert whole ordered sequences of events rather than counts, and the events often come
/// from callbacks on other threads: appending and reading take a lock, and a test can wait for
/// the log to reach a length without sleeping. Its lock is Foundation's, not the library's, so
/// the log keeps working when the code under test is broken.
package final class RecordingLog<Event>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var storage: [Event] = []
  private var waiters: [(count: Int, action: () -> Void)] = []

  /// Creates an empty log.
  package init() {}

  /// The events appended so far, in the order they were appended.
  package var events: [Event] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }

  /// Appends `event`, then runs, outside the lock, the actions waiting for this length.
  package func append(_ event: Event) {
    lock.lock()
    storage.append(event)
    let count = storage.count
    var ready: [() -> Void] = []
    waiters.removeAll { waiter in
      guard waiter.count <= count else { return false }
      ready.append(waiter.action)
      return true
    }
    lock.unlock()
    for action in ready { action() }
  }

  /// Empties the log; waiting actions keep counting from the new, empty log.
  package func removeAll() {
    lock.lock()
    storage.removeAll()
    lock.unlock()
  }

  /// Runs `action` once the log holds `count` events (at once if it already does), on the thread
  /// that appends the event reaching `count`.
  package func whenCount(reaches count: Int, _ action: @escaping () -> Void) {
    lock.lock()
    if storage.count >= count {
      lock.unlock()
      action()
      return
    }
    waiters.append((count, action))
    lock.unlock()
  }

  /// Waits, without blocking a thread, until the log holds `count` events; gives up after
  /// `timeout` seconds so that a broken delivery fails the test instead of hanging it.
  ///
  /// - Returns: Whether the log reached `count` events in time.
  package func waitForCount(_ count: Int, timeout: Double = testTimeout) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      let once = ResumeOnce(continuation)
      whenCount(reaches: count) { once.resume(returning: true) }
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
        once.resume(returning: false)
      }
    }
  }
}

/// Resumes a continuation at most once, from whichever of several callers comes first.
final class ResumeOnce<Result: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var continuation: CheckedContinuation<Result, Never>?

  init(_ continuation: CheckedContinuation<Result, Never>) {
    self.continuation = continuation
  }

  func resume(returning result: Result) {
    lock.lock()
    let continuation = self.continuation
    self.continuation = nil
    lock.unlock()
    continuation?.resume(returning: result)
  }
}
