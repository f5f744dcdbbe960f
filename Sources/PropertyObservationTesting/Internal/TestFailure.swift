#if canImport(Testing)
  internal import Testing
#endif
#if canImport(XCTest)
  internal import XCTest
#endif

/// Where a failed expectation of this library was written: the caller's `#fileID`, `#filePath`,
/// `#line` and `#column`, kept in the types both test frameworks accept.
struct CallSite {
  let fileID: StaticString
  let filePath: StaticString
  let line: UInt
  let column: UInt
}

/// Records `message` as a failure of the test that is running, at `site`.
///
/// A Swift Testing test is current on its own task: the failure is recorded with `Issue.record`,
/// at `site`. Otherwise the failure goes to `XCTFail`, which reports it for the XCTest case
/// that is running. Call it from the test's own task or thread, where the current test is known.
func recordFailure(_ message: String, at site: CallSite) {
  #if canImport(Testing)
    if Test.current != nil {
      let location = SourceLocation(
        fileID: "\(site.fileID)", filePath: "\(site.filePath)", line: Int(site.line),
        column: Int(site.column))
      Issue.record(Comment(rawValue: message), sourceLocation: location)
      return
    }
  #endif
  #if canImport(XCTest)
    XCTFail(message, file: site.filePath, line: site.line)
  #else
    print("\(site.fileID):\(site.line): error: \(message)")
  #endif
}
