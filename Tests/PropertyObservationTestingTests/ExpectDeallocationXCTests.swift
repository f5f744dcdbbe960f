import PropertyObservation
import PropertyObservationTesting
import XCTest

/// The test aids from XCTest: a failure goes to the XCTest case that is running, at the line of
/// the call. The case overrides the failure hook to capture the failures instead of failing.
final class ExpectDeallocationXCTests: XCTestCase {
  private struct Failure: Equatable {
    var description: String
    var line: Int
  }

  private var captured: [Failure] = []
  private var isCapturing = false

  #if canImport(Darwin)
    override func record(_ issue: XCTIssue) {
      guard isCapturing else { return super.record(issue) }
      captured.append(
        Failure(
          description: issue.compactDescription,
          line: issue.sourceCodeContext.location?.lineNumber ?? 0))
    }
  #else
    override func recordFailure(
      withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
      expected: Bool
    ) {
      guard isCapturing else {
        return super.recordFailure(
          withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
      }
      captured.append(Failure(description: description, line: lineNumber))
    }
  #endif

  @MainActor private final class Screen {
    var text = ""
  }

  @MainActor func testALeakedObjectFailsTheRunningCaseAtTheCall() {
    let name = Observable("Madeline")
    isCapturing = true
    let line = #line + 1
    let released = expectDeallocation {
      let screen = Screen()
      name.addObserver(screen) { name, _ in screen.text = name }  // captures the owner
      return screen
    }
    isCapturing = false
    XCTAssertFalse(released)
    XCTAssertEqual(captured.map(\.line), [line])
    XCTAssertTrue(captured.first?.description.contains("Screen was not deallocated") == true)
  }

  @MainActor func testAReleasedObjectReportsNothing() {
    let name = Observable("Madeline")
    isCapturing = true
    let released = expectDeallocation {
      let screen = Screen()
      name.observe(with: screen) { screen, name in screen.text = name }
      return screen
    }
    isCapturing = false
    XCTAssertTrue(released)
    XCTAssertEqual(captured, [])
  }

  @MainActor func testAConditionThatNeverHoldsFailsTheRunningCaseAtTheCall() async {
    isCapturing = true
    let line = #line + 1
    let held = await expectEventually(timeout: .milliseconds(20)) { false }
    isCapturing = false
    XCTAssertFalse(held)
    XCTAssertEqual(captured.map(\.line), [line])
    XCTAssertTrue(captured.first?.description.contains("timed out after 20 ms") == true)
  }
}
