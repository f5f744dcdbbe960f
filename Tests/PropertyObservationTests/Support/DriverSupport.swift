import Dispatch
import Foundation

/// A thread-safe, ordered log of events for the Driver and Binder suites.
final class DriverLog<Event>: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [Event] = []
  private var waiters: [(count: Int, action: () -> Void)] = []

  var events: [Event] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }

  func append(_ event: Event) {
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

  /// Runs `action` once the log holds `count` events (at once if it already does).
  func whenCount(reaches count: Int, _ action: @escaping () -> Void) {
    lock.lock()
    if storage.count >= count {
      lock.unlock()
      action()
      return
    }
    waiters.append((count, action))
    lock.unlock()
  }
}

/// The tests' own main-queue check, independent of the library's: a queue-specific value on
/// `DispatchQueue.main` is visible exactly while the main queue runs work.
enum TestMainQueue {
  private static let key: DispatchSpecificKey<Int> = {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 42)
    return key
  }()

  static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 42 }
}

/// Stands in for a view: a label whose text a driver or binder sets.
final class DriverTestLabel {
  var text: String?
  var count = 0
}

/// An event recorded on delivery: the value and whether it arrived on the main queue.
struct Delivery<Value: Equatable & Sendable>: Equatable, Sendable {
  var value: Value
  var onMainQueue: Bool
}

extension DriverLog {
  /// Waits, without blocking a thread, until the log holds `count` events; gives up after
  /// `timeout` seconds so that a broken delivery fails the test instead of hanging it.
  ///
  /// - Returns: Whether the log reached `count` events in time.
  func waitForCount(_ count: Int, timeout: Double = 10) async -> Bool {
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
private final class ResumeOnce<Result: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
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
