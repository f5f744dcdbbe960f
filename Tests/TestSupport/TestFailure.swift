import Foundation
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
/// instead of hanging the whole run (and CI with it). No test waits for it to pass: it is only
/// ever reached by a failure, so a longer one slows nothing down but the report of a hang.
///
/// `TEST_TIMEOUT_SECONDS` sets it (ThreadSanitizer makes everything several times slower).
/// Otherwise it is 10 s on an idle machine, stretched by the machine's load when the run starts:
/// with a load average of three runnable threads per core (another build beside `swift test`),
/// each test thread gets a third of a core, and a wait for a few seconds of work needs three
/// times as long. The stretch is at most six-fold.
package let testTimeout: Double = {
  if let raw = getenv("TEST_TIMEOUT_SECONDS"), let seconds = Double(String(cString: raw)) {
    return seconds
  }
  return defaultTestTimeout * machineLoadFactor
}()

/// The load average of the last minute per core, between 1 and 6: how many times slower than on
/// an idle machine a thread of the tests may run.
private var machineLoadFactor: Double {
  var load = [0.0]
  let cores = Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
  guard getloadavg(&load, 1) == 1 else { return 1 }
  return min(6, max(1, load[0] / cores))
}

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
