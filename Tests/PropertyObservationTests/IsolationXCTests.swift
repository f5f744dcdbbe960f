import Dispatch
import Foundation
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
    // calls; either way each main-thread set is delivered before it returns (a background
    // deliverer hands the main thread the role instead of delivering its change for it), and
    // the main-actor log ends up in the order of the rounds, which a nonisolated observer
    // records.
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
        // Its own round came first; within its combining budget the main thread may then
        // have delivered background changes queued behind it too.
        XCTAssertTrue(log.values.contains(value), "a main-thread set returned before its delivery")
      }
    }
    wait(for: [everything], timeout: 20)
    MainActor.assumeIsolated { XCTAssertEqual(log.values, rounds.events) }
    withExtendedLifetime((token, roundsToken)) {}
  }

  func testAMainActorTokenWhoseInitialTheRoundWaitsForGetsEveryRoundInOrder() {
    // Registered with `.initial` while a background round waits for that very `.initial`, the
    // token cannot wait for the turn: `.initial` runs at once, the rounds delivered meanwhile
    // are kept for it and delivered after `.initial`, and every later round reaches the main
    // actor, in order, none lost.
    let source = Observable(0)
    let firstRound = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let tenthRound = DispatchSemaphore(value: 0)
    let registered = DispatchSemaphore(value: 0)
    let blocker = observeNonisolated(source) { value in
      if value == 1 {
        firstRound.signal()
        waitForSignal(resume, "the registration's .initial")
      }
      if value == 10 {
        // Still delivering when `.initial` returns: this thread catches the entry up.
        tenthRound.signal()
        waitForSignal(registered, "the registration to return")
      }
    }
    DispatchQueue.global().async {
      for value in 1...50 { source.value = value }
    }
    waitForSignal(firstRound, "the first background round")
    let everything = expectation(description: "the main actor saw every value")
    let (token, log) = MainActor.assumeIsolated { () -> (ObservationToken, MainLog) in
      let log = MainLog()
      let token = source.observe(options: [.initial, .new]) { value, option in
        log.values.append(value)
        // Under XCTest the main actor's executor is the main thread itself.
        if !Thread.isMainThread { log.offMainCalls += 1 }
        if option == .initial {
          // Let the background thread deliver rounds this registration misses meanwhile.
          resume.signal()
          waitForSignal(tenthRound, "the tenth background round")
        }
        if value == 50 { everything.fulfill() }
      }
      return (token, log)
    }
    registered.signal()
    wait(for: [everything], timeout: 10)
    MainActor.assumeIsolated {
      XCTAssertEqual(log.values, Array(1...50))
      XCTAssertEqual(log.offMainCalls, 0)
    }
    withExtendedLifetime((token, blocker)) {}
  }

  func testAMainActorTokenOnADerivedValueGetsBackgroundChangesOnTheMainActor() {
    // A derived value with one observer calls it without a round of its own; a main-actor
    // token there must still be called on the main actor only.
    let source = Observable(0)
    let doubled = source.map { $0 * 2 }
    let everything = expectation(description: "the main actor saw every value")
    let (token, log) = MainActor.assumeIsolated { () -> (ObservationToken, MainLog) in
      let log = MainLog()
      let token = doubled.observe { value, _ in
        log.values.append(value)
        if !Thread.isMainThread { log.offMainCalls += 1 }
        if value == 200 { everything.fulfill() }
      }
      return (token, log)
    }
    DispatchQueue.global().async {
      for value in 1...100 { source.value = value }
    }
    wait(for: [everything], timeout: 10)
    MainActor.assumeIsolated {
      XCTAssertEqual(log.values, (1...100).map { $0 * 2 })
      XCTAssertEqual(log.offMainCalls, 0)
    }
    withExtendedLifetime(token) {}
  }
}

/// Waits for `semaphore` at most ``testTimeout`` seconds: a regression fails the test instead of
/// hanging the run.
private func waitForSignal(
  _ semaphore: DispatchSemaphore, _ what: String, file: StaticString = #filePath, line: UInt = #line
) {
  if semaphore.wait(timeout: .now() + testTimeout) == .timedOut {
    XCTFail("timed out waiting for \(what)", file: file, line: line)
  }
}

/// Registers from nonisolated code, so `body` runs on each round's delivering thread.
private func observeNonisolated(
  _ source: Observable<Int>, _ body: @escaping @Sendable (Int) -> Void
) -> ObservationToken {
  source.observe { value, _ in body(value) }
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
  var offMainCalls = 0
}
