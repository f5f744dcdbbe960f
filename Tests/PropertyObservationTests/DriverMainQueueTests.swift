import Dispatch
import PropertyObservation
import TestSupport
import XCTest

/// Driver and Binder on the real main queue. XCTest's `wait(for:timeout:)` runs the main run loop
/// on the main thread on Linux, which drains the main queue, so these tests are XCTest cases whose
/// bodies run on the main queue.
final class DriverMainQueueTests: XCTestCase {
  private let background = DispatchQueue(label: "DriverMainQueueTests.background")

  /// Sets `observable` to each value from a background queue and waits until it is done.
  private func setInBackground<Value: Sendable>(
    _ observable: Observable<Value>, to values: [Value], line: UInt = #line
  ) {
    runInBackground(on: background) {
      for value in values { observable.value = value }
    }.waitUntilFinished("the background sets", line: line)
  }

  func testBackgroundSetsAreDeliveredOnTheMainQueueInOrder() {
    let count = Observable(0)
    let driver = count.asDriver()
    let log = RecordingLog<Delivery<Int>>()
    let delivered = expectation(description: "all values delivered")
    log.whenCount(reaches: 4) { delivered.fulfill() }

    let token = background.sync {
      driver.drive { log.append(Delivery(value: $0, onMainQueue: TestMainQueue.isCurrent)) }
    }
    setInBackground(count, to: [1, 2, 3])
    wait(for: [delivered], timeout: 10)

    XCTAssertEqual(
      log.events, [0, 1, 2, 3].map { Delivery(value: $0, onMainQueue: true) })
    withExtendedLifetime(token) {}
  }

  func testASetOnTheMainQueueIsDeliveredBeforeItReturnsWhenNothingIsQueued() {
    XCTAssertTrue(TestMainQueue.isCurrent)
    let count = Observable(0)
    let log = RecordingLog<Int>()
    let token = count.asDriver().drive { log.append($0) }
    XCTAssertEqual(log.events, [0], "the replay is delivered inside drive")
    count.value = 1
    XCTAssertEqual(log.events, [0, 1])
    count.value = 2
    XCTAssertEqual(log.events, [0, 1, 2])
    withExtendedLifetime(token) {}
  }

  func testAMainQueueSetNeverOvertakesAValueQueuedFromTheBackground() {
    let count = Observable(0)
    let log = RecordingLog<Int>()
    let token = count.asDriver().drive { log.append($0) }
    let delivered = expectation(description: "both values delivered")
    log.whenCount(reaches: 3) { delivered.fulfill() }

    setInBackground(count, to: [1])
    count.value = 2  // on the main queue, but 1 is still waiting there
    XCTAssertEqual(log.events, [0], "2 must wait behind the queued 1")
    wait(for: [delivered], timeout: 10)
    XCTAssertEqual(log.events, [0, 1, 2])
    withExtendedLifetime(token) {}
  }

  func testBurstsFromSeveralThreadsArriveInTheOrderTheValuesWereSet() {
    let source = Observable(0)
    // The order in which the source's rounds ran is the order every subscriber must see.
    let upstreamOrder = RecordingLog<Int>()
    let upstream = source.observe { value, _ in upstreamOrder.append(value) }
    let driver = source.asDriver()
    let first = RecordingLog<Int>()
    let second = RecordingLog<Int>()
    let tokens = [driver.drive { first.append($0) }, driver.drive { second.append($0) }]
    let threads = 4
    let perThread = 250
    let delivered = expectation(description: "every value delivered to both")
    delivered.expectedFulfillmentCount = 2
    first.whenCount(reaches: 1 + threads * perThread) { delivered.fulfill() }
    second.whenCount(reaches: 1 + threads * perThread) { delivered.fulfill() }

    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for index in 1...perThread { source.value = thread * 10_000 + index }
    }
    wait(for: [delivered], timeout: 30)

    XCTAssertEqual(first.events, [0] + upstreamOrder.events)
    XCTAssertEqual(second.events, first.events)
    for thread in 0..<threads {
      let own = first.events.filter { $0 / 10_000 == thread && $0 % 10_000 != 0 }
      XCTAssertEqual(own, (1...perThread).map { thread * 10_000 + $0 })
    }
    withExtendedLifetime((tokens, upstream)) {}
  }

  func testALateSubscriberFirstReceivesTheCurrentValue() {
    let count = Observable(0)
    let driver = count.asDriver()
    let early = RecordingLog<Int>()
    let late = RecordingLog<Int>()
    let earlyToken = driver.drive { early.append($0) }
    count.value = 1
    count.value = 2
    let lateToken = driver.drive { late.append($0) }
    XCTAssertEqual(late.events, [2])
    count.value = 3
    XCTAssertEqual(early.events, [0, 1, 2, 3])
    XCTAssertEqual(late.events, [2, 3])
    withExtendedLifetime((earlyToken, lateToken)) {}
  }

  func testALateSubscriberOffTheMainQueueGetsTheReplayOnTheMainQueueBeforeLaterChanges() {
    let count = Observable(0)
    let driver = count.asDriver()
    let early = driver.drive { _ in }
    count.value = 5
    let late = RecordingLog<Delivery<Int>>()
    let delivered = expectation(description: "replay and change delivered")
    late.whenCount(reaches: 2) { delivered.fulfill() }
    let token = background.sync {
      driver.drive { late.append(Delivery(value: $0, onMainQueue: TestMainQueue.isCurrent)) }
    }
    setInBackground(count, to: [6])
    wait(for: [delivered], timeout: 10)
    XCTAssertEqual(late.events, [5, 6].map { Delivery(value: $0, onMainQueue: true) })
    withExtendedLifetime((early, token)) {}
  }

  func testCoalescingDeliversOnlyTheLatestValuePerMainQueueTurn() {
    let progress = Observable(0)
    let driver = progress.asDriver(policy: .coalescing)
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    let lastSeen = expectation(description: "main queue turn after the burst")

    setInBackground(progress, to: Array(1...1000))
    DispatchQueue.main.async { lastSeen.fulfill() }
    wait(for: [lastSeen], timeout: 10)
    XCTAssertEqual(log.events, [0, 1000], "the burst waited as one value")
    XCTAssertEqual(driver.mainQueueHopCount, 1)
    withExtendedLifetime(token) {}
  }

  func testACoalescingDriverHasDeliveredTheLastValueWhenAMainSyncAfterItReturns() {
    // A coalescing turn waits while its producer keeps replacing the value; a producer that
    // then waits for the main queue (`main.sync`) must still find its last value delivered.
    let progress = Observable(0)
    let driver = progress.asDriver(policy: .coalescing)
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    let flushed = expectation(description: "the producer's main.sync returned")
    let seenAtFlush = RecordingLog<Int?>()
    background.async {
      for value in 1...20_000 { progress.value = value }
      DispatchQueue.main.sync {}
      seenAtFlush.append(log.events.last)
      flushed.fulfill()
    }
    wait(for: [flushed], timeout: 10)
    XCTAssertEqual(seenAtFlush.events, [20_000])
    XCTAssertEqual(log.events, log.events.sorted(), "values in order")
    XCTAssertLessThan(log.events.count, 20_001, "a fast producer's values were coalesced")
    withExtendedLifetime(token) {}
  }

  func testAValueSetWhileACoalescingTurnDeliversGetsATurnBeforeLaterMainQueueWork() {
    // The value set while the turn's callback runs is not that turn's: its turn must be queued
    // at once, ahead of main-queue work queued after the set, not when the running turn ends.
    let progress = Observable(0)
    let driver = progress.asDriver(policy: .coalescing)
    let log = RecordingLog<Int>()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let token = driver.drive { value in
      if value == 1 {
        entered.signal()
        _ = release.wait(timeout: .now() + 10)
      }
      log.append(value)
    }
    let queuedAfter = expectation(description: "main-queue work queued after the set ran")
    let seenThen = RecordingLog<Int?>()
    background.async {
      progress.value = 1
      _ = entered.wait(timeout: .now() + 10)
      progress.value = 2
      DispatchQueue.main.async {
        seenThen.append(log.events.last)
        queuedAfter.fulfill()
      }
      release.signal()
    }
    wait(for: [queuedAfter], timeout: 10)
    XCTAssertEqual(seenThen.events, [2])
    XCTAssertEqual(log.events, [0, 1, 2])
    withExtendedLifetime(token) {}
  }

  func testEveryValuePolicyDeliversAWholeBackgroundBurstInOrder() {
    let progress = Observable(0)
    let driver = progress.asDriver()
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    let delivered = expectation(description: "whole burst delivered")
    log.whenCount(reaches: 1001) { delivered.fulfill() }
    setInBackground(progress, to: Array(1...1000))
    wait(for: [delivered], timeout: 10)
    XCTAssertEqual(log.events, Array(0...1000))
    withExtendedLifetime(token) {}
  }

  @MainActor func testABinderAppliesValuesSentFromTheBackgroundOnTheMainQueueInOrder() {
    let label = DriverTestLabel()
    let log = RecordingLog<Delivery<String>>()
    let binder = Binder<String>(label) { label, text in
      label.text = text
      log.append(Delivery(value: text, onMainQueue: TestMainQueue.isCurrent))
    }
    let applied = expectation(description: "values applied")
    log.whenCount(reaches: 3) { applied.fulfill() }
    background.async {
      for text in ["a", "b", "c"] { binder.send(text) }
    }
    wait(for: [applied], timeout: 10)
    XCTAssertEqual(log.events, ["a", "b", "c"].map { Delivery(value: $0, onMainQueue: true) })
    XCTAssertEqual(label.text, "c")
  }

  @MainActor func testABinderAppliesAtOnceOnTheMainQueueAndNeverOvertakesQueuedValues() {
    let label = DriverTestLabel()
    let binder = Binder<String>(label) { label, text in label.text = text }
    binder.send("now")
    XCTAssertEqual(label.text, "now", "applied before send returned")

    runInBackground(on: background) { binder.send("queued") }.waitUntilFinished("the send")
    binder.send("later")
    XCTAssertEqual(label.text, "now", "later must wait behind queued")
    let drained = expectation(description: "main queue drained")
    DispatchQueue.main.async { drained.fulfill() }
    wait(for: [drained], timeout: 10)
    XCTAssertEqual(label.text, "later")
  }

  @MainActor
  func testBindingAnObservableToABinderAppliesTheCurrentValueAndChangesUntilTheTargetDies() {
    let name = Observable("Ray")
    let log = RecordingLog<String>()
    weak var weakLabel: DriverTestLabel?
    do {
      let label = DriverTestLabel()
      weakLabel = label
      name.bind(
        to: Binder(label) { label, text in
          label.text = text
          log.append(text)
        })
      XCTAssertEqual(label.text, "Ray")
      name.value = "Amelia"
      XCTAssertEqual(label.text, "Amelia")
      XCTAssertEqual(name.observerCount, 1)
    }
    XCTAssertNil(weakLabel)
    XCTAssertEqual(name.observerCount, 0)
    name.value = "Madeline"
    setInBackground(name, to: ["Nobody"])
    let drained = expectation(description: "main queue drained")
    DispatchQueue.main.async { drained.fulfill() }
    wait(for: [drained], timeout: 10)
    XCTAssertEqual(log.events, ["Ray", "Amelia"])
  }
}
