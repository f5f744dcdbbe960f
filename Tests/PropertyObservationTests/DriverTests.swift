import Dispatch
import TestSupport
import Testing

@testable import PropertyObservation

/// Driver behaviour on the test schedulers: ordering, sharing, replay, lifetimes and policies,
/// checked step by step without waiting.
@Suite struct DriverTests {
  private struct Failure: Error, Equatable {}

  @Test func theManualSchedulerDeliversQueuedValuesStepByStepInOrder() {
    let main = ManualScheduler()
    let count = Observable(0)
    let driver = count.asDriver(scheduler: .manual(main))
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    count.value = 1
    count.value = 2
    #expect(log.events == [])
    #expect(main.pendingCount == 1, "one turn carries every waiting value")
    #expect(main.runNext())
    #expect(log.events == [0, 1, 2])
    #expect(!main.runNext())
    withExtendedLifetime(token) {}
  }

  @Test func drivingAnObservableSetsItOnEachTurnAndEndsWhenItGoes() {
    let main = ManualScheduler()
    let title = Observable("a")
    let driver = title.asDriver(scheduler: .manual(main))
    let log = RecordingLog<String>()
    weak var weakShown: Observable<String>?
    var token: ObservationToken?
    do {
      let shown = Observable("")
      weakShown = shown
      driver.drive(shown, \.value)
      token = shown.observe(options: [.initial, .new]) { value, _ in log.append(value) }
      title.value = "b"
      #expect(log.events == [""], "nothing is set before the main-queue turn")
      #expect(main.runNext())
      #expect(log.events == ["", "a", "b"])
      token = nil
    }
    // The observable owns the drive and is held weakly: it goes with its last user.
    #expect(weakShown == nil)
    title.value = "c"
    main.runAll()
    #expect(log.events == ["", "a", "b"])
    withExtendedLifetime(token) {}
  }

  @Test func aTurnAlsoDeliversValuesThatArriveWhileItRunsWithoutAnotherHop() {
    let main = ManualScheduler()
    let count = Observable(0)
    let driver = count.asDriver(scheduler: .manual(main))
    let log = RecordingLog<Int>()
    let token = driver.drive { value in
      log.append(value)
      if value == 1 { count.value = 2 }
    }
    count.value = 1
    #expect(main.pendingCount == 1)
    let start = DispatchTime.now().uptimeNanoseconds
    #expect(main.runNext())
    guard
      DispatchTime.now().uptimeNanoseconds - start
        < MainQueueMailbox.frameBudgetNanoseconds
    else {
      // The thread was held up for a whole frame's budget (a loaded machine): the turn may
      // have yielded before 2, as it must, and the next turn delivers it.
      while main.runNext() {}
      #expect(log.events == [0, 1, 2])
      return
    }
    #expect(log.events == [0, 1, 2], "2 arrived during the turn and went out in it")
    #expect(main.pendingCount == 0)
    #expect(driver.mainQueueHopCount == 1)
    withExtendedLifetime(token) {}
  }

  @Test func aTurnThatSpendsItsFrameBudgetLeavesTheRestInOrderForTheNextTurn() {
    let main = ManualScheduler()
    let count = Observable(0)
    let driver = count.asDriver(scheduler: .manual(main))
    let log = RecordingLog<Int>()
    let token = driver.drive { value in
      log.append(value)
      guard value == 1 else { return }
      // Longer than a turn's 8 ms frame budget.
      let start = DispatchTime.now().uptimeNanoseconds
      while DispatchTime.now().uptimeNanoseconds - start < 9_000_000 {}
    }
    main.runAll()
    count.value = 1
    count.value = 2
    count.value = 3
    #expect(main.runNext())
    #expect(log.events == [0, 1], "the turn yielded once its budget was spent")
    #expect(main.pendingCount == 1, "and scheduled a turn for the rest")
    count.value = 4
    main.runAll()
    #expect(log.events == [0, 1, 2, 3, 4])
    withExtendedLifetime(token) {}
  }

  @Test func aCoalescingTurnDeliversOnlyWhatWaitedWhenItStarted() {
    let main = ManualScheduler()
    let count = Observable(0)
    let driver = count.asDriver(policy: .coalescing, scheduler: .manual(main))
    let log = RecordingLog<Int>()
    let token = driver.drive { value in
      log.append(value)
      if value == 3 { count.value = 4 }
    }
    count.value = 1
    count.value = 2
    count.value = 3
    #expect(main.runNext())
    #expect(log.events == [3], "the initial 0 and 1, 2 merged into 3; 4 waits for the next turn")
    #expect(main.pendingCount == 1)
    main.runAll()
    #expect(log.events == [3, 4])
    #expect(driver.mainQueueHopCount == 2)
    withExtendedLifetime(token) {}
  }

  @Test func aMainQueueSetIsDeliveredAtOnceWhenNothingIsWaiting() {
    let main = ManualScheduler()
    let count = Observable(0)
    let log = RecordingLog<Int>()
    let token = main.runOnMain { count.asDriver(scheduler: .manual(main)).drive { log.append($0) } }
    #expect(log.events == [0])
    main.runOnMain { count.value = 1 }
    #expect(log.events == [0, 1])
    #expect(main.pendingCount == 0)
    withExtendedLifetime(token) {}
  }

  @Test func aMainQueueSetWaitsBehindAValueQueuedEarlier() {
    let main = ManualScheduler()
    let count = Observable(0)
    let log = RecordingLog<Int>()
    let token = main.runOnMain { count.asDriver(scheduler: .manual(main)).drive { log.append($0) } }
    count.value = 1  // off the main queue: queued
    main.runOnMain { count.value = 2 }
    #expect(log.events == [0], "2 must not overtake the queued 1")
    main.runAll()
    #expect(log.events == [0, 1, 2])
    withExtendedLifetime(token) {}
  }

  @Test func aSetFromADriveCallbackReachesEverySubscriberAfterTheCurrentValue() {
    let count = Observable(0)
    let driver = count.asDriver(scheduler: .immediate)
    let log = RecordingLog<String>()
    let first = driver.drive { value in
      log.append("first \(value)")
      if value == 1 { count.value = 2 }
    }
    let second = driver.drive { log.append("second \($0)") }
    count.value = 1
    #expect(
      log.events == [
        "first 0", "second 0", "first 1", "second 1", "first 2", "second 2",
      ])
    withExtendedLifetime((first, second)) {}
  }

  @Test func allSubscribersShareOneUpstreamRegistrationAndOneRunOfItsWork() {
    let result = Observable<Result<Int, Failure>>(.success(1))
    let recoveries = RecordingLog<Failure>()
    let driver = result.asDriver(scheduler: .immediate) { error in
      recoveries.append(error)
      return -1
    }
    let logs = [RecordingLog<Int>(), RecordingLog<Int>(), RecordingLog<Int>()]
    let tokens = logs.map { log in driver.drive { log.append($0) } }
    #expect(result.observerCount == 1)
    result.value = .failure(Failure())
    result.value = .success(2)
    #expect(recoveries.events == [Failure()], "the recovery ran once for three subscribers")
    for log in logs { #expect(log.events == [1, -1, 2]) }
    withExtendedLifetime(tokens) {}
  }

  @Test func theUpstreamRegistrationEndsWithTheLastSubscriberAndTheDriverIsReleased() {
    let count = Observable(0)
    weak var weakDriver: Driver<Int>?
    let log = RecordingLog<Int>()
    do {
      let driver = count.asDriver(scheduler: .immediate)
      weakDriver = driver
      #expect(count.observerCount == 0, "no registration before the first subscriber")
      let first = driver.drive { log.append($0) }
      let second = driver.drive { _ in }
      #expect(count.observerCount == 1)
      first.cancel()
      #expect(count.observerCount == 1)
      withExtendedLifetime(second) {}
    }
    #expect(count.observerCount == 0)
    #expect(weakDriver == nil)
    count.value = 1
    #expect(log.events == [0])
  }

  @Test func anUnusedDriverIsReleasedAndATokenKeepsItAlive() {
    let count = Observable(0)
    weak var unused: Driver<Int>?
    do {
      let driver = count.asDriver()
      unused = driver
    }
    #expect(unused == nil)

    weak var used: Driver<Int>?
    let log = RecordingLog<Int>()
    var token: ObservationToken?
    do {
      let driver = count.asDriver(scheduler: .immediate)
      used = driver
      token = driver.drive { log.append($0) }
    }
    #expect(used != nil, "the token keeps the driver alive")
    count.value = 1
    #expect(token != nil)
    token = nil
    #expect(used == nil)
    #expect(count.observerCount == 0)
    count.value = 2
    #expect(log.events == [0, 1])
  }

  @Test func aDriverKeepsItsSourceAlive() {
    weak var weakSource: Observable<Int>?
    let driver: Driver<Int>
    do {
      let source = Observable(7)
      weakSource = source
      driver = source.asDriver(scheduler: .immediate)
    }
    #expect(weakSource != nil)
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    #expect(log.events == [7])
    withExtendedLifetime(token) {}
  }

  @Test func cancellingOrReleasingATokenStopsDeliveryAlsoOfQueuedValues() {
    let main = ManualScheduler()
    let count = Observable(0)
    let driver = count.asDriver(scheduler: .manual(main))
    let cancelled = RecordingLog<Int>()
    let released = RecordingLog<Int>()
    let kept = RecordingLog<Int>()
    let cancelledToken = driver.drive { cancelled.append($0) }
    var releasedToken: ObservationToken? = driver.drive { released.append($0) }
    let keptToken = driver.drive { kept.append($0) }
    main.runAll()
    count.value = 1
    main.runOnMain {
      cancelledToken.cancel()
      releasedToken = nil
    }
    main.runAll()
    #expect(cancelled.events == [0])
    #expect(released.events == [0])
    #expect(kept.events == [0, 1])
    #expect(releasedToken == nil)
    withExtendedLifetime(keptToken) {}
  }

  @MainActor @Test func aKeyPathDriveEndsWhenTheTargetDies() {
    let title = Observable("Ray")
    weak var weakDriver: Driver<String>?
    weak var weakLabel: DriverTestLabel?
    do {
      let label = DriverTestLabel()
      weakLabel = label
      let driver = title.asDriver(scheduler: .immediate)
      weakDriver = driver
      driver.drive(label, \.text)
      #expect(label.text == "Ray")
      title.value = "Amelia"
      #expect(label.text == "Amelia")
    }
    #expect(weakLabel == nil)
    #expect(weakDriver != nil, "the target's drive keeps the driver until it notices")
    title.value = "Madeline"
    #expect(weakDriver == nil, "the next change lets the driver go")
    #expect(title.observerCount == 0)
  }

  @MainActor @Test func keyPathOwnerAndBinderDrivesAllReceiveTheValues() {
    let count = Observable(1)
    let driver = count.asDriver(scheduler: .immediate)
    @MainActor final class Counter {
      var value = 0
      var described = ""
    }
    let counter = Counter()
    let label = DriverTestLabel()
    let log = RecordingLog<String>()
    driver.drive(counter, \.value)
    driver.drive(with: counter) { counter, value in counter.described = "#\(value)" }
    driver.drive(Binder(label, scheduler: .immediate) { label, value in label.count = value })
    count.value = 2
    #expect(counter.value == 2)
    #expect(counter.described == "#2")
    #expect(label.count == 2)
    driver.stopDriving(counter)
    count.value = 3
    #expect(counter.value == 2)
    #expect(counter.described == "#2")
    #expect(label.count == 3)
    #expect(log.events == [])
  }

  @MainActor @Test func anOptionalKeyPathIsDriven() {
    let title = Observable("Ray")
    let label = DriverTestLabel()
    title.asDriver(scheduler: .immediate).drive(label, \.text)
    #expect(label.text == "Ray")
    title.value = "Amelia"
    #expect(label.text == "Amelia")
  }

  @Test func coalescingKeepsOnlyTheLatestWaitingValueAndCountsOneHopPerTurn() {
    let main = ManualScheduler()
    let progress = Observable(0)
    let driver = progress.asDriver(policy: .coalescing, scheduler: .manual(main))
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    main.runAll()
    #expect(log.events == [0])
    for value in 1...100 { progress.value = value }
    #expect(main.pendingCount == 1)
    main.runAll()
    #expect(log.events == [0, 100])
    #expect(driver.mainQueueHopCount == 2)

    let everyValue = progress.asDriver(scheduler: .manual(main))
    let all = RecordingLog<Int>()
    let allToken = everyValue.drive { all.append($0) }
    for value in 101...103 { progress.value = value }
    let start = DispatchTime.now().uptimeNanoseconds
    main.runAll()
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    #expect(all.events == [100, 101, 102, 103])
    // One turn, unless a loaded machine held it up for a whole frame's budget (it then yields).
    if elapsed < MainQueueMailbox.frameBudgetNanoseconds {
      #expect(everyValue.mainQueueHopCount == 1)
    }
    withExtendedLifetime((token, allToken)) {}
  }

  @Test func aFailureIsReplacedByTheFallbackAndLaterValuesStillArrive() {
    let result = Observable<Result<String, Failure>>(.failure(Failure()))
    let log = RecordingLog<String>()
    let token = result.asDriver(onErrorJustReturn: "fallback", scheduler: .immediate)
      .drive { log.append($0) }
    result.value = .success("done")
    result.value = .failure(Failure())
    #expect(log.events == ["fallback", "done", "fallback"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func withSchedulerChangesTheSchedulerOfDriversAndBindersCreatedInside() {
    let main = ManualScheduler()
    let count = Observable(0)
    let label = DriverTestLabel()
    let (driver, binder) = MainScheduler.withScheduler(.manual(main)) {
      (count.asDriver(), Binder<Int>(label) { label, value in label.count = value })
    }
    let log = RecordingLog<Int>()
    let token = driver.drive { log.append($0) }
    binder.send(5)
    #expect(log.events == [])
    #expect(label.count == 0)
    main.runAll()
    #expect(log.events == [0])
    #expect(label.count == 5)
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aBinderDropsValuesOnceItsTargetIsGone() {
    let main = ManualScheduler()
    let log = RecordingLog<String>()
    var label: DriverTestLabel? = DriverTestLabel()
    let binder = Binder<String>(label!, scheduler: .manual(main)) { _, text in log.append(text) }
    binder.send("queued")
    label = nil
    binder.send("after")
    main.runAll()
    #expect(log.events == [])
  }
}
