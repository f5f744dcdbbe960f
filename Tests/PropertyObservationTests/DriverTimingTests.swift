import Dispatch
import PropertyObservation
import TestSupport
import Testing

/// `debounce(for:)` and `throttle(for:latest:)` on a `ManualScheduler`'s virtual clock, step by
/// step and without sleeping; and once each on the real main queue.
@Suite struct DriverTimingTests {
  // MARK: - Virtual time

  @Test func theManualClockMovesOnlyWhenAdvancedAndRunAllLeavesLaterWorkWaiting() {
    let main = ManualScheduler()
    let text = Observable("a")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
      .record(on: main, into: log)
    main.runAll()
    #expect(main.pendingCount == 0, "the quiet period's timer is not due yet")
    #expect(main.elapsedTime == .nanoseconds(0))
    #expect(log.events == [])
    main.advance(by: .milliseconds(250))
    #expect(main.elapsedTime == .milliseconds(250))
    #expect(log.events == [])
    main.advance(by: .milliseconds(250))
    #expect(main.elapsedTime == .milliseconds(500))
    #expect(log.events == [Arrival("a", at: 300)], "delivered at the timer's time, not the end")
    withExtendedLifetime(token) {}
  }

  @Test func advancingRunsWorkQueuedFromTheBackgroundBeforeLaterTimers() {
    let main = ManualScheduler()
    let text = Observable("a")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100))
      .record(on: main, into: log)
    main.advance(by: .milliseconds(50))
    text.value = "ab"  // off the main queue: queued, due now (50 ms)
    #expect(main.pendingCount == 1)
    main.advance(by: .milliseconds(99))
    #expect(log.events == [], "ab restarted the wait at 50 ms; a's timer at 100 ms is stale")
    main.advance(by: .milliseconds(1))
    #expect(log.events == [Arrival("ab", at: 150)])
    withExtendedLifetime(token) {}
  }

  // MARK: - Debounce

  @Test func debounceWaitsForTheQuietPeriodBeforeTheFirstValue() {
    let main = ManualScheduler()
    let text = Observable("")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
      .record(on: main, into: log)
    #expect(log.events == [], "unlike a plain driver, nothing arrives inside drive")
    main.advance(by: .milliseconds(299))
    #expect(log.events == [])
    main.advance(by: .milliseconds(1))
    #expect(log.events == [Arrival("", at: 300)])
    withExtendedLifetime(token) {}
  }

  @Test func debounceCoalescesABurstIntoItsLastValueAfterTheQuietPeriod() {
    let main = ManualScheduler()
    let text = Observable("")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
      .record(on: main, into: log)
    main.advance(by: .milliseconds(300))
    for query in ["s", "sw", "swi", "swif", "swift"] {
      main.set(text, to: query)
      main.advance(by: .milliseconds(100))
    }
    #expect(log.events == [Arrival("", at: 300)], "typing every 100 ms is never quiet")
    main.advance(by: .milliseconds(199))
    #expect(log.events == [Arrival("", at: 300)])
    main.advance(by: .milliseconds(1))
    #expect(log.events == [Arrival("", at: 300), Arrival("swift", at: 1_000)])
    main.advance(by: .seconds(10))
    #expect(log.events.count == 2, "a quiet source delivers nothing more")
    withExtendedLifetime(token) {}
  }

  @Test func aValueArrivingDuringTheWaitRestartsIt() {
    let main = ManualScheduler()
    let text = Observable("a")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
      .record(on: main, into: log)
    main.advance(by: .milliseconds(200))
    main.set(text, to: "b")
    main.advance(by: .milliseconds(200))
    #expect(log.events == [], "a's wait ended at 300 ms, but b arrived at 200 ms")
    main.set(text, to: "c")
    main.advance(by: .milliseconds(299))
    #expect(log.events == [])
    main.advance(by: .milliseconds(1))
    #expect(log.events == [Arrival("c", at: 700)])
    withExtendedLifetime(token) {}
  }

  @Test func aLateSubscriberOfADebouncedDriverGetsItsLastDeliveredValueAtOnce() {
    let main = ManualScheduler()
    let text = Observable("a")
    let debounced = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100))
    let first = RecordingLog<Arrival<String>>()
    let early = RecordingLog<Arrival<String>>()
    let late = RecordingLog<Arrival<String>>()
    let firstToken = debounced.record(on: main, into: first)
    main.advance(by: .milliseconds(50))
    let earlyToken = debounced.record(on: main, into: early)
    #expect(early.events == [], "nothing delivered yet: the early subscriber waits")
    main.advance(by: .milliseconds(50))
    main.set(text, to: "b")
    main.advance(by: .milliseconds(50))
    let lateToken = debounced.record(on: main, into: late)
    #expect(late.events == [Arrival("a", at: 150)], "the last delivered value, not b")
    main.advance(by: .milliseconds(50))
    #expect(first.events == [Arrival("a", at: 100), Arrival("b", at: 200)])
    #expect(early.events == first.events)
    #expect(late.events == [Arrival("a", at: 150), Arrival("b", at: 200)])
    #expect(text.observerCount == 1, "three subscribers share one upstream registration")
    withExtendedLifetime((firstToken, earlyToken, lateToken)) {}
  }

  @Test func debounceOnTheImmediateSchedulerDeliversEveryValueAtOnce() {
    let count = Observable(0)
    let log = RecordingLog<Int>()
    let token = count.asDriver(scheduler: .immediate).debounce(for: .seconds(1))
      .drive { log.append($0) }
    count.value = 1
    count.value = 2
    #expect(log.events == [0, 1, 2], "no time passes on .immediate: every wait is over at once")
    withExtendedLifetime(token) {}
  }

  // MARK: - Throttle

  @Test func throttleLatestDeliversTheFirstValueAtOnceAndTheLatestOfEachWindowAtItsEnd() {
    let log = throttled(latest: true)
    #expect(
      log == [
        Arrival(0, at: 0),  // at once: no window was open
        Arrival(2, at: 100),  // the latest of 1 and 2; opens the window to 200
        Arrival(3, at: 200),  // opens the window to 300, which ends with nothing waiting
        Arrival(4, at: 350),  // at once: the window had closed
        Arrival(6, at: 450),
      ])
  }

  @Test func throttleFirstDeliversTheFirstValueOfEachWindowAtItsEnd() {
    let log = throttled(latest: false)
    #expect(
      log == [
        Arrival(0, at: 0),
        Arrival(1, at: 100),  // the first of 1 and 2; 2 is dropped
        Arrival(3, at: 200),
        Arrival(4, at: 350),
        Arrival(5, at: 450),
      ])
  }

  /// Values 1 and 2 at 30 and 60 ms, 3 at 150, 4 at 350, 5 and 6 at 360 and 370 ms, through a
  /// 100 ms throttle, until 1 s.
  private func throttled(latest: Bool) -> [Arrival<Int>] {
    let main = ManualScheduler()
    let count = Observable(0)
    let log = RecordingLog<Arrival<Int>>()
    let token = count.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: latest)
      .record(on: main, into: log)
    for (time, value) in [(30, 1), (60, 2), (150, 3), (350, 4), (360, 5), (370, 6)] {
      main.advance(by: .milliseconds(time) - main.elapsedTime)
      main.set(count, to: value)
    }
    main.advance(by: .seconds(1) - main.elapsedTime)
    withExtendedLifetime(token) {}
    return log.events
  }

  @Test func aLateSubscriberOfAThrottledDriverGetsItsLastDeliveredValueNotAWaitingOne() {
    let main = ManualScheduler()
    let count = Observable(0)
    let throttled = count.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: true)
    let first = RecordingLog<Arrival<Int>>()
    let late = RecordingLog<Arrival<Int>>()
    let firstToken = throttled.record(on: main, into: first)
    main.set(count, to: 1)  // waits for the window's end
    main.advance(by: .milliseconds(50))
    let lateToken = throttled.record(on: main, into: late)
    main.advance(by: .milliseconds(50))
    #expect(first.events == [Arrival(0, at: 0), Arrival(1, at: 100)])
    #expect(late.events == [Arrival(0, at: 50), Arrival(1, at: 100)])
    withExtendedLifetime((firstToken, lateToken)) {}
  }

  @Test func aThrottledDriverStartsOverWithItsNextFirstSubscriber() {
    let main = ManualScheduler()
    let count = Observable(0)
    let throttled = count.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: true)
    let log = RecordingLog<Arrival<Int>>()
    var token: ObservationToken? = throttled.record(on: main, into: log)
    main.set(count, to: 1)  // waits for the window's end, at 100 ms
    main.runOnMain { token = nil }
    main.advance(by: .milliseconds(50))
    main.set(count, to: 2)
    token = throttled.record(on: main, into: log)
    main.advance(by: .milliseconds(100))
    #expect(
      log.events == [Arrival(0, at: 0), Arrival(2, at: 50)],
      "1 was dropped with the last subscriber; the new one gets the current value at once")
    withExtendedLifetime(token) {}
  }

  // MARK: - Order

  @Test(arguments: [true, false])
  func throttleKeepsTheOrderOfValuesAndAtLeastAnIntervalBetweenThem(latest: Bool) {
    let main = ManualScheduler()
    let count = Observable(0)
    let log = RecordingLog<Arrival<Int>>()
    let token = count.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: latest)
      .record(on: main, into: log)
    for value in 1...40 {
      main.advance(by: .milliseconds(value % 3 == 0 ? 70 : 20))
      if value % 5 == 0 {
        count.value = value  // off the main queue: queued, delivered at the next advance
      } else {
        main.set(count, to: value)
      }
    }
    main.advance(by: .seconds(1))
    let values = log.events.map(\.value)
    let times = log.events.map(\.time)
    #expect(values == values.sorted() && Set(values).count == values.count, "\(log.events)")
    for (earlier, later) in zip(times, times.dropFirst()) {
      #expect(later >= earlier + .milliseconds(100), "\(log.events)")
    }
    if latest { #expect(values.last == 40, "the last value is always delivered") }
    withExtendedLifetime(token) {}
  }

  @Test func debounceKeepsTheOrderOfValuesSetFromTheBackgroundAndTheMainQueue() {
    let main = ManualScheduler()
    let count = Observable(0)
    let log = RecordingLog<Arrival<Int>>()
    let token = count.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100))
      .record(on: main, into: log)
    count.value = 1  // off the main queue: queued
    main.set(count, to: 2)  // on the main queue, but behind 1
    main.advance(by: .milliseconds(150))
    count.value = 3
    main.advance(by: .milliseconds(150))
    #expect(log.events == [Arrival(2, at: 100), Arrival(3, at: 250)])
    withExtendedLifetime(token) {}
  }

  // MARK: - Re-entrancy

  @Test func aSetFromADebouncedCallbackIsDebouncedInItsTurn() {
    let main = ManualScheduler()
    let text = Observable("a")
    let log = RecordingLog<Arrival<String>>()
    let token = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100))
      .record(on: main, into: log)
    let echo = main.runOnMain {
      text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100)).drive { value in
        if value == "a" { text.value = "a!" }
      }
    }
    main.advance(by: .seconds(1))
    #expect(log.events == [Arrival("a", at: 100), Arrival("a!", at: 200)])
    withExtendedLifetime((token, echo)) {}
  }

  @Test func aSetFromAThrottledCallbackWaitsForTheNextWindow() {
    let main = ManualScheduler()
    let count = Observable(0)
    let throttled = count.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: true)
    let log = RecordingLog<Arrival<Int>>()
    let token = main.runOnMain {
      throttled.drive { value in
        log.append(Arrival(value, time: main.elapsedTime))
        if value < 3 { count.value = value + 1 }
      }
    }
    main.advance(by: .seconds(1))
    #expect(
      log.events == [
        Arrival(0, at: 0), Arrival(1, at: 100), Arrival(2, at: 200), Arrival(3, at: 300),
      ])
    withExtendedLifetime(token) {}
  }

  // MARK: - Cancellation and lifetime

  @Test func nothingIsDeliveredAfterTheTokenIsCancelled() {
    let main = ManualScheduler()
    let text = Observable("a")
    let debounced = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(100))
    let throttled = text.asDriver(scheduler: .manual(main))
      .throttle(for: .milliseconds(100), latest: true)
    let cancelled = RecordingLog<Arrival<String>>()
    let kept = RecordingLog<Arrival<String>>()
    let debouncedToken = debounced.record(on: main, into: cancelled)
    let throttledToken = throttled.record(on: main, into: cancelled)
    let keptToken = debounced.record(on: main, into: kept)
    main.set(text, to: "b")  // waits in both
    main.runOnMain {
      debouncedToken.cancel()
      throttledToken.cancel()
    }
    main.advance(by: .seconds(1))
    #expect(cancelled.events == [Arrival("a", at: 0)], "only the throttle's first value")
    #expect(kept.events == [Arrival("b", at: 100)], "another subscriber is not affected")
    keptToken.cancel()
    #expect(text.observerCount == 0)
    main.set(text, to: "c")
    main.advance(by: .seconds(1))
    #expect(kept.events == [Arrival("b", at: 100)])
  }

  @Test func aTimedDriverKeepsNothingAliveAfterItsLastSubscriberGoes() {
    let main = ManualScheduler()
    let text = Observable("a")
    let log = RecordingLog<String>()
    weak var weakDebounced: Driver<String>?
    weak var weakThrottled: Driver<String>?
    weak var weakUpstream: Driver<String>?
    do {
      let upstream = text.asDriver(scheduler: .manual(main))
      weakUpstream = upstream
      let debounced = upstream.debounce(for: .milliseconds(100))
      weakDebounced = debounced
      let throttled = upstream.throttle(for: .milliseconds(100), latest: true)
      weakThrottled = throttled
      let tokens = main.runOnMain {
        [debounced.drive { log.append("debounced \($0)") }, throttled.drive { log.append($0) }]
      }
      main.set(text, to: "b")  // a timer is pending in each
      withExtendedLifetime(tokens) {}
    }
    #expect(weakDebounced == nil)
    #expect(weakThrottled == nil)
    #expect(weakUpstream == nil)
    #expect(text.observerCount == 0)
    main.advance(by: .seconds(1))  // the pending timers run and find nothing
    #expect(log.events == ["a"])
  }

  // MARK: - Threads

  /// Values from one thread, subscribers coming and going on three others, timers and deliveries
  /// on the main queue (run under ThreadSanitizer).
  @MainActor @Test func subscribersComingAndGoingOnOtherThreadsLeaveTheLastValueDelivered() async {
    let count = Observable(0)
    let debounced = count.asDriver().debounce(for: .milliseconds(1))
    let throttled = count.asDriver().throttle(for: .milliseconds(1), latest: true)
    let churnedDebounce = count.asDriver().debounce(for: .milliseconds(1))
    let churnedThrottle = count.asDriver().throttle(for: .milliseconds(1), latest: false)
    let debouncedLast = RecordingLog<Int>()
    let throttledLast = RecordingLog<Int>()
    let tokens = [
      debounced.drive { if $0 == -1 { debouncedLast.append($0) } },
      throttled.drive { if $0 == -1 { throttledLast.append($0) } },
    ]
    await Task.detached {
      runConcurrently(4) { thread in
        switch thread {
        case 0: for value in 1...2_000 { count.value = value }
        case 1: for _ in 0..<200 { debounced.drive { _ in }.cancel() }
        case 2: for _ in 0..<200 { churnedDebounce.drive { _ in }.cancel() }
        default: for _ in 0..<200 { churnedThrottle.drive { _ in }.cancel() }
        }
      }
    }.value
    count.value = -1
    #expect(await debouncedLast.waitForCount(1))
    #expect(await throttledLast.waitForCount(1))
    #expect(count.observerCount == 2, "only the two kept subscribers' drivers stay connected")
    withExtendedLifetime(tokens) {}
  }

  // MARK: - The real main queue

  @MainActor @Test func debounceOnTheMainQueueDeliversTheLastValueThereAfterTheWait() async {
    let text = Observable("s")
    let log = RecordingLog<Delivery<String>>()
    let token = text.asDriver(scheduler: .main).debounce(for: .milliseconds(20)).drive {
      log.append(Delivery(value: $0, onMainQueue: TestMainQueue.isCurrent))
    }
    text.value = "sw"
    text.value = "swift"
    #expect(log.events == [])
    #expect(await log.waitForCount(1))
    #expect(log.events == [Delivery(value: "swift", onMainQueue: true)])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func throttleOnTheMainQueueDeliversTheFirstValueAtOnceAndTheLatestLater()
    async
  {
    let count = Observable(0)
    let log = RecordingLog<Delivery<Int>>()
    let token = count.asDriver(scheduler: .main).throttle(for: .milliseconds(20), latest: true)
      .drive { log.append(Delivery(value: $0, onMainQueue: TestMainQueue.isCurrent)) }
    #expect(log.events == [Delivery(value: 0, onMainQueue: true)], "delivered inside drive")
    count.value = 1
    count.value = 2
    #expect(await log.waitForCount(2))
    #expect(log.events == [0, 2].map { Delivery(value: $0, onMainQueue: true) })
    withExtendedLifetime(token) {}
  }
}
