import Dispatch
import PropertyObservation
import Testing

/// Drivers made from async operations, and a driver's values as an async sequence.
@Suite struct DriverAsyncTests {
  private struct Offline: Error {}

  /// Waits until `log` holds `count` events.
  private func waitUntil<Event>(_ log: DriverLog<Event>, holds count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      log.whenCount(reaches: count) { continuation.resume() }
    }
  }

  @Test func anAsyncOperationRunsOnceForAllSubscribers() async {
    let runs = DriverLog<String>()
    let gate = DispatchSemaphore(value: 0)
    let driver = Driver(
      initialValue: "loading", onErrorJustReturn: "fallback", scheduler: .immediate
    ) {
      runs.append("request")
      gate.wait()  // holds the response until every subscriber is in
      return "response"
    }
    let first = DriverLog<String>()
    let second = DriverLog<String>()
    let tokens = [driver.drive { first.append($0) }, driver.drive { second.append($0) }]
    gate.signal()
    await waitUntil(second, holds: 2)
    let late = DriverLog<String>()
    let lateToken = driver.drive { late.append($0) }
    #expect(runs.events == ["request"])
    #expect(first.events == ["loading", "response"])
    #expect(second.events == ["loading", "response"])
    #expect(late.events == ["response"])
    withExtendedLifetime((tokens, lateToken)) {}
  }

  @Test func aThrowingOperationDeliversTheFallback() async {
    let driver = Driver<String>(
      initialValue: "loading", onErrorJustReturn: "fallback", scheduler: .immediate
    ) {
      throw Offline()
    }
    let log = DriverLog<String>()
    let token = driver.drive { log.append($0) }
    await waitUntil(log, holds: 2)
    #expect(log.events == ["loading", "fallback"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func valuesYieldsTheCurrentValueThenEveryChangeOnTheMainQueue() async {
    let count = Observable(0)
    let driver = count.asDriver()
    var iterator = driver.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    DispatchQueue.global().async {
      count.value = 1
      count.value = 2
    }
    #expect(await iterator.next() == 1)
    #expect(await iterator.next() == 2)
  }

  @MainActor @Test func endingTheIterationEndsTheSubscription() async {
    let count = Observable(0)
    weak var weakDriver: Driver<Int>?
    do {
      let driver = count.asDriver()
      weakDriver = driver
      for await value in driver.values where value == 0 {
        break
      }
      #expect(count.observerCount == 0)
    }
    #expect(weakDriver == nil)
  }
}
