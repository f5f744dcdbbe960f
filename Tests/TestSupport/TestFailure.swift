import Testing
import XCTest

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// How long a test waits for another thread before it records a failure and goes on.
///
/// Every wait in the tests is bounded by it, so a regression that loses a signal fails its test
/// instead of hanging the whole run (and CI with it). 10 s by default; `TEST_TIMEOUT_SECONDS`
/// raises it for slow runs (ThreadSanitizer makes everything several times slower, and on two
/// cores the heavy suites can keep every shared test thread busy for seconds).
package let testTimeout: Double = {
  guard let raw = getenv("TEST_TIMEOUT_SECONDS"), let seconds = Double(String(cString: raw)) else {
    return defaultTestTimeout
  }
  return seconds
}()

/// ``testTimeout`` when `TEST_TIMEOUT_SECONDS` is not set: waits sized for a normal run scale by
/// `testTimeout / defaultTestTimeout`.
package let defaultTestTimeout: Double = 10

/// Records `message` as a failure of the test running on the calling thread, at the caller's
/// source location.
///
/// The support helpers serve Swift Testing suites and XCTest cases alike, so this reports through
/// whichever framework runs the current test: `Issue.record` while a Swift Testing test is
/// current, `XCTFail` otherwise. Call it from the test's own thread or task, where the current
/// test is known.
package func recordFailure(
  _ message: String,
  fileID: String = #fileID,
  filePath: StaticString = #filePath,
  line: UInt = #line,
  column: UInt = #column
) {
  if Test.current != nil {
    let location = SourceLocation(
      fileID: fileID, filePath: "\(filePath)", line: Int(line), column: Int(column))
    Issue.record(Comment(rawValue: message), sourceLocation: location)
  } else {
    XCTFail(message, file: filePath, line: line)
  }
}
