import Dispatch
import PropertyObservation
import PropertyObservationTesting
import XCTest

/// The recorder from XCTest, including deliveries on the main queue, which only a test that
/// keeps the main run loop turning (`wait(for:timeout:)`) can see arrive.
final class ObservationRecorderXCTests: XCTestCase {
  func testDifferenceIsTheAssertionMessage() {
    let score = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(score, as: "score")
    score.value = 3
    XCTAssertNil(recorder.difference(from: [.initial("score", 0), .new("score", 3)]))
  }

  func testOnEventCountFulfilsAnExpectationForMainQueueDeliveries() {
    let score = Observable(0)
    let recorder = ObservationRecorder()
    let screen: @Sendable (Int) -> Void = recorder.sink("screen")
    // Forward every change to the main queue, as a Driver does.
    let token = score.observe { value, _ in
      DispatchQueue.main.async { screen(value) }
    }
    let delivered = expectation(description: "two values on the main queue")
    recorder.onEventCount(2) { delivered.fulfill() }

    DispatchQueue.global().async {
      score.value = 1
      score.value = 2
    }

    wait(for: [delivered], timeout: 10)
    XCTAssertEqual(recorder.events, [.new("screen", 1), .new("screen", 2)])
    token.cancel()
  }
}
