import Dispatch
import PropertyObservation
import TestSupport
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

  func testMainActorObserversGetBackgroundChangesInTheOrderOfRounds() {
    // An observable's main-actor registrations share one lane to the main queue, so calls that
    // wait for it arrive round by round, in registration order within each round, however many
    // of them a main-queue turn delivers.
    let arrived = expectation(description: "every background value arrived on the main actor")
    let (source, token, owner, log) = MainActor.assumeIsolated {
      () -> (Observable<Int>, ObservationToken, MainLog, MainLog) in
      let source = Observable(0)
      let log = MainLog()
      let owner = MainLog()
      let token = source.observe { value, _ in log.values.append(value) }
      source.addObserver(owner) { value, _ in
        log.values.append(-value)
        if value == 300 { arrived.fulfill() }
      }
      return (source, token, owner, log)
    }
    DispatchQueue.global().async {
      for value in 1...300 { source.value = value }
    }
    wait(for: [arrived], timeout: 10)
    MainActor.assumeIsolated {
      XCTAssertEqual(log.values, (1...300).flatMap { [$0, -$0] })
    }
    withExtendedLifetime((token, owner)) {}
  }

  func testMainActorCallsFollowTheRoundsWhenTheMainThreadAndABackgroundThreadBothSet() {
    // Main-thread rounds call main-actor observers inline or behind a backlog of background
    // calls; either way each main-thread set is delivered before it returns, and the main-actor
    // log ends up in the order of the rounds, which a nonisolated observer records.
    let source = Observable(0)
    let rounds = RecordingLog<Int>()
    let roundsToken = observeNonisolated(source, into: rounds)
    let everything = expectation(description: "the main actor saw every round")
    let (token, log) = MainActor.assumeIsolated { () -> (ObservationToken, MainLog) in
      let log = MainLog()
      let token = source.observe { value, _ in
        log.values.append(value)
        if log.values.count == 600 { everything.fulfill() }
      }
      return (token, log)
    }
    let background = DispatchQueue.global()
    background.async {
      for value in 1...500 { source.value = value }
    }
    MainActor.assumeIsolated {
      for value in 1001...1100 {
        source.value = value
        XCTAssertEqual(log.values.last, value, "a main-thread set returned before its delivery")
      }
    }
    wait(for: [everything], timeout: 20)
    MainActor.assumeIsolated { XCTAssertEqual(log.values, rounds.events) }
    withExtendedLifetime((token, roundsToken)) {}
  }
}

/// Registers from nonisolated code, so the callback runs on each round's delivering thread.
private func observeNonisolated(
  _ source: Observable<Int>, into log: RecordingLog<Int>
) -> ObservationToken {
  source.observe { value, _ in log.append(value) }
}

/// Main-actor state for the background test.
@MainActor
private final class MainLog: Sendable {
  var values: [Int] = []
}
