package import Dispatch
import Foundation

/// Work running on another thread, which the test waits for with a deadline.
///
/// Tests that need a second thread (a setter racing a round, a producer feeding a consumer) used
/// to signal a semaphore at the end of the work and wait for it without a timeout; if the work
/// never ended, neither did the run. Waiting here fails the test instead.
package final class BackgroundRun: Sendable {
  private let finished = DispatchSemaphore(value: 0)
  /// Wakes the `async` waits when the work has returned.
  private let returned = Signal()

  fileprivate init(on queue: DispatchQueue?, _ body: @escaping @Sendable () -> Void) {
    let run: @Sendable () -> Void = { [finished, returned] in
      body()
      finished.signal()
      returned.signal()
    }
    if let queue { queue.async(execute: run) } else { startThread(run) }
  }

  /// Blocks until the work has returned, or records a failure naming `what` after `timeout`
  /// seconds.
  ///
  /// - Returns: Whether the work returned in time.
  @discardableResult
  package func waitUntilFinished(
    _ what: String = "the work on another thread",
    timeout: Double = testTimeout,
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    guard finished.wait(timeout: .now() + timeout) == .timedOut else {
      // Taken: put it back, so that a later wait sees the work finished too.
      finished.signal()
      return true
    }
    recordFailure(
      "\(what) did not finish within \(timeout) s", fileID: fileID, filePath: filePath,
      line: line, column: column)
    return false
  }
}

extension BackgroundRun {
  /// Waits, without blocking a thread of the test's cooperative pool or the main actor, until
  /// the work has returned, or records a failure naming `what` after `timeout` seconds.
  ///
  /// Use it in `async` tests: a synchronous wait there holds one of the pool's few threads (two
  /// on a 2-core machine) for as long as the work runs, and starves the other tests.
  ///
  /// - Returns: Whether the work returned in time.
  @discardableResult
  package func finished(
    _ what: String = "the work on another thread",
    timeout: Double = testTimeout,
    fileID: String = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async -> Bool {
    let isFinished = await returned.wait(for: timeout) {
      guard finished.wait(timeout: .now()) == .success else { return false }
      finished.signal()  // put back, so that a later wait sees the work finished too
      return true
    }
    if !isFinished {
      recordFailure(
        "\(what) did not finish within \(timeout) s", fileID: fileID, filePath: filePath,
        line: line, column: column)
    }
    return isFinished
  }
}

/// Checks `condition` every millisecond, sleeping in between rather than blocking a thread, until
/// it holds or `timeout` seconds have passed.
///
/// - Returns: Whether `condition` held in time.
package func poll(for timeout: Double, until condition: () -> Bool) async -> Bool {
  let deadline = DispatchTime.now() + timeout
  while DispatchTime.now() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
  return condition()
}

/// Starts `body` on `queue`, or by default on a thread of its own, and returns at once; wait for
/// it with ``BackgroundRun/waitUntilFinished(_:timeout:fileID:filePath:line:column:)`` (or
/// ``BackgroundRun/finished(_:timeout:fileID:filePath:line:column:)`` in an `async` test).
///
/// Not a global queue by default: on Linux those share their few threads (one per core) with
/// the tasks Swift Testing runs tests on, so work queued there waits behind every test that
/// holds a thread, and a test that waits for it can time out on a busy machine.
package func runInBackground(
  on queue: DispatchQueue? = nil,
  _ body: @escaping @Sendable () -> Void
) -> BackgroundRun {
  BackgroundRun(on: queue, body)
}

/// Starts `body` on a new thread, outside every pool, so that it runs however many of the
/// pools' threads the other tests hold.
package func startThread(_ body: @escaping @Sendable () -> Void) {
  let thread = Thread(block: body)
  thread.stackSize = 1 << 20
  thread.start()
}

/// Runs `body(index)` for each index below `count`, on that many threads released together, and
/// waits for all of them, recording a failure if they have not finished within `timeout` seconds.
///
/// The stress tests start their threads at one gate so that the bodies overlap as much as they
/// can, rather than the first finishing before the last starts.
package func runConcurrently(
  _ count: Int,
  timeout: Double = testTimeout,
  fileID: String = #fileID,
  filePath: StaticString = #filePath,
  line: UInt = #line,
  column: UInt = #column,
  _ body: @escaping @Sendable (Int) -> Void
) {
  let group = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for index in 0..<count {
    group.enter()
    // A thread each (see `runInBackground`), so that the bodies overlap even while the pools'
    // threads are taken.
    startThread {
      // Released at once below; the deadline only keeps a starved thread from waiting forever.
      _ = start.wait(timeout: .now() + timeout)
      body(index)
      group.leave()
    }
  }
  for _ in 0..<count { start.signal() }
  guard group.wait(timeout: .now() + timeout) == .timedOut else { return }
  recordFailure(
    "\(count) concurrent bodies did not finish within \(timeout) s", fileID: fileID,
    filePath: filePath, line: line, column: column)
}

/// Stays busy for `microseconds` of wall time, or until `isDone` returns `true`: a window of fixed
/// length for other threads to overlap. Use it instead of `sched_yield`, whose cost grows with the
/// number of runnable threads (a yield can hand the core to another thread for its whole time
/// slice), so that tens of yields per call take minutes on a busy machine.
package func spin(microseconds: UInt64, until isDone: () -> Bool = { false }) {
  let end = DispatchTime.now().uptimeNanoseconds + microseconds * 1_000
  while DispatchTime.now().uptimeNanoseconds < end && !isDone() {}
}
