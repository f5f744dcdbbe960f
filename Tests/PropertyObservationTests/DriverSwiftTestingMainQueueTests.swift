import Dispatch
import PropertyObservation
import TestSupport
import Testing

/// The real main queue under Swift Testing: on Linux it is drained by a thread that is not the
/// main thread, so these tests prove that delivery follows the queue, not the thread. They run on
/// the main actor and wait with continuations.
@Suite struct DriverSwiftTestingMainQueueTests {
  @MainActor @Test func backgroundValuesReachAnAwaitingMainActorTestOnTheMainQueue() async {
    #expect(TestMainQueue.isCurrent, "the main actor runs on the main queue")
    let count = Observable(0)
    let driver = count.asDriver()
    let log = RecordingLog<Delivery<Int>>()
    let token = driver.drive {
      log.append(Delivery(value: $0, onMainQueue: TestMainQueue.isCurrent))
    }
    #expect(log.events == [Delivery(value: 0, onMainQueue: true)], "delivered inside drive")

    DispatchQueue.global().async {
      count.value = 1
      count.value = 2
    }
    #expect(await log.waitForCount(3))
    #expect(log.events == [0, 1, 2].map { Delivery(value: $0, onMainQueue: true) })
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aBinderSentFromTheBackgroundUpdatesOnTheMainQueue() async {
    let label = DriverTestLabel()
    let log = RecordingLog<Delivery<String>>()
    let binder = Binder<String>(label) { label, text in
      label.text = text
      log.append(Delivery(value: text, onMainQueue: TestMainQueue.isCurrent))
    }
    DispatchQueue.global().async {
      binder.send("a")
      binder.send("b")
    }
    #expect(await log.waitForCount(2))
    #expect(log.events == ["a", "b"].map { Delivery(value: $0, onMainQueue: true) })
    #expect(label.text == "b")
  }
}
