import Dispatch
import PropertyObservation
import XCTest

/// Issue 11 under XCTest, where tests run on the main thread itself (not in a main-queue block):
/// a main-actor observer of a set made on the main thread runs before the set returns, and a
/// background set reaches it through the main queue.
final class IsolationXCTests: XCTestCase {
  func testAMainActorObserverSeesAMainThreadSetBeforeItReturns() {
    MainActor.assumeIsolated {
      let source = Observable(0)
      var log: [Int] = []
      let token = source.observe(options: [.initial, .new]) { value, _ in log.append(value) }
      source.value = 1
      source.value = 2
      XCTAssertEqual(log, [0, 1, 2])
      withExtendedLifetime(token) {}
    }
  }

  func testABackgroundSetReachesAMainActorObserverThroughTheMainQueue() {
    let arrived = expectation(description: "the background values arrived on the main actor")
    let (source, token, log) = MainActor.assumeIsolated {
      () -> (Observable<Int>, ObservationToken, MainLog) in
      let source = Observable(0)
      let log = MainLog()
      let token = source.observe { value, _ in
        log.values.append(value)
        if value == 2 { arrived.fulfill() }
      }
      return (source, token, log)
    }
    DispatchQueue.global().async {
      source.value = 1
      source.value = 2
    }
    wait(for: [arrived], timeout: 10)
    MainActor.assumeIsolated { XCTAssertEqual(log.values, [1, 2]) }
    withExtendedLifetime(token) {}
  }
}

/// Main-actor state for the background test.
@MainActor
private final class MainLog: Sendable {
  var values: [Int] = []
}
