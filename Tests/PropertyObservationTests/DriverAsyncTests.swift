import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

/// A one-shot latch that a task awaits without holding a thread of the pool.
private final class Latch: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []

  func opened() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      lock.lock()
      guard !isOpen else {
        lock.unlock()
        return continuation.resume()
      }
      waiters.append(continuation)
      lock.unlock()
    }
  }

  func open() {
    lock.lock()
    isOpen = true
    let waiters = self.waiters
    self.waiters = []
    lock.unlock()
    for waiter in waiters { waiter.resume() }
  }
}

/// How long these tests wait for an unstructured `Task` to start: the operation's task runs on
/// the global pool, which the suite's dedicated threads may starve for longer than one test
/// timeout on a machine with few cores. Only a failing run waits this long.
private let taskStartTimeout = 6 * testTimeout

/// Drivers made from async operations, and a driver's values as an async sequence.
@Suite struct DriverAsyncTests {
  private struct Offline: Error {}

  @Test func anAsyncOperationRunsOnceForAllSubscribers() async {
    await onItsOwnThread {
      let runs = RecordingLog<String>()
      let response = Latch()
      let driver = Driver(
        initialValue: "loading", onErrorJustReturn: "fallback", scheduler: .immediate
      ) {
        runs.append("request")
        // Holds the response until every subscriber is in, without holding a thread.
        await response.opened()
        return "response"
      }
      let first = RecordingLog<String>()
      let second = RecordingLog<String>()
      let tokens = [driver.drive { first.append($0) }, driver.drive { second.append($0) }]
      response.open()
      #expect(await second.waitForCount(2, timeout: taskStartTimeout))
      let late = RecordingLog<String>()
      let lateToken = driver.drive { late.append($0) }
      // The replay may wait for the turn that delivered the response to end, on its thread.
      #expect(await late.waitForCount(1, timeout: taskStartTimeout))
      #expect(runs.events == ["request"])
      #expect(first.events == ["loading", "response"])
      #expect(second.events == ["loading", "response"])
      #expect(late.events == ["response"])
      withExtendedLifetime((tokens, lateToken)) {}
    }
  }

  @Test func aThrowingOperationDeliversTheFallback() async {
    await onItsOwnThread {
      let driver = Driver<String>(
        initialValue: "loading", onErrorJustReturn: "fallback", scheduler: .immediate
      ) {
        throw Offline()
      }
      let log = RecordingLog<String>()
      let token = driver.drive { log.append($0) }
      #expect(await log.waitForCount(2, timeout: taskStartTimeout))
      #expect(log.events == ["loading", "fallback"])
      withExtendedLifetime(token) {}
    }
  }

  @MainActor @Test func valuesYieldsTheCurrentValueThenEveryChangeOnTheMainQueue() async {
    let count = Observable(0)
    let values = count.asDriver().values
    let log = RecordingLog<Delivery<Int>>()
    let consumer = Task { @MainActor in
      for await value in values {
        log.append(Delivery(value: value, onMainQueue: TestMainQueue.isCurrent))
      }
    }
    #expect(await log.waitForCount(1, timeout: taskStartTimeout))
    DispatchQueue.global().async {
      count.value = 1
      count.value = 2
    }
    #expect(await log.waitForCount(3, timeout: taskStartTimeout))
    consumer.cancel()
    #expect(log.events == [0, 1, 2].map { Delivery(value: $0, onMainQueue: true) })
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
