public import Dispatch

/// Waits on the main actor until `condition` holds, and fails the current test if it does not
/// hold before `timeout`.
///
/// For state that main-queue work updates later: a `@MainActor` controller whose label a
/// background load sets through a main-actor callback or a ``/PropertyObservation/Driver``. The
/// condition is checked at once, then again after each pause, while the main queue runs the
/// work that is waiting; the wait ends as soon as it holds. Nothing sleeps for a fixed time, and
/// no test needs a polling loop of its own:
///
/// ```swift
/// @MainActor final class ProfileViewController {
///   var nameText = ""
///
///   func show(_ name: Observable<String>) {
///     name.observe(with: self, options: [.initial, .new]) { controller, name in
///       controller.nameText = name
///     }
///   }
/// }
///
/// @Test @MainActor func loadingShowsTheName() async {
///   let name = Observable("")
///   let controller = ProfileViewController()
///   controller.show(name)
///   DispatchQueue.global().async { name.value = "Amelia" }  // a network callback
///   await expectEventually { controller.nameText == "Amelia" }
/// }
/// ```
///
/// Once the deadline has passed, the condition is checked one last time. If it still does not
/// hold, or if the task is cancelled first, the failure is reported to the test
/// that is running, at the line of the call (through `Issue.record` in a Swift Testing test,
/// through `XCTFail` in an XCTest case), and the function returns `false`.
///
/// > Important: The condition runs on the main actor, which must be free to run the work you
/// > wait for: in XCTest, await this from an `async` test method, not from inside a
/// > `wait(for:timeout:)`. The pauses between checks grow from 1 ms to 16 ms, so a condition
/// > that costs little to check may be checked a few hundred times.
///
/// - Parameters:
///   - comment: A note added to the failure message, such as the state being waited for.
///   - timeout: How long to wait before the test fails; 10 seconds by default.
///   - fileID: The file ID of the call, used in the failure's location.
///   - filePath: The file path of the call, used in the failure's location.
///   - line: The line of the call, used in the failure's location.
///   - column: The column of the call, used in the failure's location.
///   - condition: The state to wait for, checked on the main actor.
/// - Returns: Whether the condition held before the deadline.
@MainActor
@discardableResult
public func expectEventually(
  _ comment: String? = nil,
  timeout: DispatchTimeInterval = .seconds(10),
  fileID: StaticString = #fileID,
  filePath: StaticString = #filePath,
  line: UInt = #line,
  column: UInt = #column,
  _ condition: @MainActor () throws -> Bool
) async rethrows -> Bool {
  let deadline = DispatchTime.now() + timeout
  var pause: UInt64 = 1_000_000
  // Whether the check about to be made started at or after the deadline. Only such a check may
  // fail the wait, so the condition is always checked once more after the deadline, however
  // long a busy machine kept this task from running.
  var isPastDeadline = false
  while true {
    if try condition() { return true }
    let reason: String
    if Task.isCancelled {
      reason = "the task was cancelled first"
    } else if isPastDeadline {
      reason = "the wait timed out after \(describe(timeout))"
    } else {
      // Sleeping rather than yielding leaves the cores to the work being waited for; a sleep
      // cut short by cancellation is caught by the check above on the next turn.
      try? await Task.sleep(nanoseconds: pause)
      pause = min(pause * 2, 16_000_000)
      isPastDeadline = DispatchTime.now() >= deadline
      continue
    }
    let message = (comment.map { "\($0): " } ?? "") + "the condition did not hold: \(reason)."
    recordFailure(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
  }
}

/// `timeout` as a reader writes it: "10 s", "250 ms".
private func describe(_ timeout: DispatchTimeInterval) -> String {
  switch timeout {
  case .seconds(let seconds): "\(seconds) s"
  case .milliseconds(let milliseconds): "\(milliseconds) ms"
  case .microseconds(let microseconds): "\(microseconds) µs"
  case .nanoseconds(let nanoseconds): "\(nanoseconds) ns"
  case .never: "never"
  @unknown default: "\(timeout)"
  }
}
