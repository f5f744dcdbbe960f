import Dispatch
import Foundation

/// A known point inside a round where the thread running it stops until the test opens the gate.
///
/// The ordering contract is about what happens while another thread is in the middle of a round:
/// a set, a registration or a removal made then. To pin that without sleeps, a callback calls
/// ``block()`` at the point of interest; the test waits until a thread is blocked there, acts, and
/// opens the gate. ``runOnAnotherThread(_:whileBlocked:fileID:filePath:line:column:)`` and
/// ``run(_:whileBlockedOnAnotherThread:fileID:filePath:line:column:)`` do the whole sequence.
///
/// Every wait has a deadline (``testTimeout``): a thread blocked at a gate that is never opened
/// goes on after it, and the test records the failure when it next opens the gate or finishes a
/// sequence, so a regression fails its test instead of hanging the run.
package final class Gate: @unchecked Sendable {
  private let name: String
  private let arrived = DispatchSemaphore(value: 0)
  private let opened = DispatchSemaphore(value: 0)
  /// Wakes the `async` waits for a thread to arrive.
  private let arrival = Signal()
  private let lock = NSLock()
  // Guarded by `lock`: failures seen on a thread other than the test's, reported by the test.
  private var problems: [String] = []

  /// Creates a closed gate.
  ///
  /// - Parameter name: What the gate stands for, used in failure messages ("round 1").
  package init(_ name: String = "the gate") {
    self.name = name
  }

  /// Stops the calling thread here until the test opens the gate.
  ///
  /// Call it from the code to hold, typically an observer callback on the value of interest.
  /// Each call waits for one ``open(fileID:filePath:line:column:)``; after ``testTimeout``
  /// seconds it goes on and leaves the failure for the test to report.
  package func block() {
    arrived.signal()
    arrival.signal()
    guard opened.wait(timeout: .now() + testTimeout) == .timedOut else { return }
    note("a thread waited \(testTimeout) s at \(name) and went on without it being opened")
  }

  /// Blocks the test until a thread is blocked at the gate, or records a failure after
  /// ``testTimeout`` seconds.
  ///
  /// - Returns: Whether a thread reached the gate in time.
  @discardableResult
  package func waitUntilBlocked(
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    guard arrived.wait(timeout: .now() + testTimeout) == .timedOut else { return true }
    recordFailure(
      "no thread reached \(name) within \(testTimeout) s", fileID: fileID, filePath: filePath,
      line: line, column: column)
    return false
  }

  /// ``waitUntilBlocked(fileID:filePath:line:column:)`` for `async` tests: waits for the thread's
  /// arrival without blocking a thread of the cooperative pool or the main actor, which other
  /// tests need.
  ///
  /// - Returns: Whether a thread reached the gate in time.
  @discardableResult
  package func blocked(
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async -> Bool {
    if await arrival.wait(for: testTimeout, until: { arrived.wait(timeout: .now()) == .success }) {
      return true
    }
    recordFailure(
      "no thread reached \(name) within \(testTimeout) s", fileID: fileID, filePath: filePath,
      line: line, column: column)
    return false
  }

  /// Lets one blocked thread (or the next to arrive) go on, and records the failures of threads
  /// that gave up waiting at the gate.
  package func open(
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) {
    opened.signal()
    reportProblems(fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Runs `round` on another thread until it blocks at the gate, runs `meanwhile` on this thread
  /// while it is held there, then opens the gate and waits until `round` has returned.
  ///
  /// What `meanwhile` returns (say, a token it registered) is returned, for the test to use after
  /// the round.
  ///
  /// ```swift
  /// let gate = Gate("round 1")
  /// let token = observable.observe { value, _ in
  ///   if value == 1 { gate.block() }
  /// }
  /// gate.runOnAnotherThread {
  ///   observable.value = 1
  /// } whileBlocked: {
  ///   observable.value = 2  // made while round 1 is running on the other thread
  /// }
  /// ```
  package func runOnAnotherThread<Result>(
    _ round: @escaping @Sendable () -> Void,
    whileBlocked meanwhile: () throws -> Result,
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) rethrows -> Result {
    let work = runInBackground(round)
    defer {
      open(fileID: fileID, filePath: filePath, line: line, column: column)
      work.waitUntilFinished(
        "the round held at \(name)", fileID: fileID, filePath: filePath, line: line,
        column: column)
    }
    waitUntilBlocked(fileID: fileID, filePath: filePath, line: line, column: column)
    return try meanwhile()
  }

  /// Runs `round` on this thread; once it blocks at the gate, runs `meanwhile` on another thread,
  /// then opens the gate from there and waits until both have returned.
  ///
  /// The mirror image of ``runOnAnotherThread(_:whileBlocked:fileID:filePath:line:column:)``,
  /// for tests that pin what the setting thread itself sees. `meanwhile` runs off the test's
  /// thread: record what it sees in a log and assert after this returns.
  package func run(
    _ round: () throws -> Void,
    whileBlockedOnAnotherThread meanwhile: @escaping @Sendable () -> Void,
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) rethrows {
    let other = runInBackground { [self] in
      if arrived.wait(timeout: .now() + testTimeout) == .success {
        meanwhile()
      } else {
        note("no thread reached \(name) within \(testTimeout) s")
      }
      opened.signal()
    }
    defer {
      other.waitUntilFinished(
        "the work done while \(name) was blocked", fileID: fileID, filePath: filePath,
        line: line, column: column)
      reportProblems(fileID: fileID, filePath: filePath, line: line, column: column)
    }
    try round()
  }

  private func note(_ problem: String) {
    lock.lock()
    problems.append(problem)
    lock.unlock()
  }

  private func reportProblems(fileID: String, filePath: StaticString, line: UInt, column: UInt) {
    lock.lock()
    let problems = self.problems
    self.problems.removeAll()
    lock.unlock()
    for problem in problems {
      recordFailure(problem, fileID: fileID, filePath: filePath, line: line, column: column)
    }
  }
}
