// The body of an XCTest test method, for snippets that use `expectation(description:)`,
// `wait(for:timeout:)` and the `XCTAssert` functions.
import Dispatch
import PropertyObservation
import PropertyObservationTesting
import Testing
import XCTest

final class SnippetTests: XCTestCase {
  func snippet(
    recorder: ObservationRecorder, expected: [ObservationRecorder.Event], score: Observable<Int>
  ) {
    do {
      // snippet: here
    }
  }
}
