import Dispatch
import PropertyObservation
import TestSupport
import Testing

/// Subscribing, cancelling and setting from several threads at once (run under ThreadSanitizer).
@Suite struct DriverConcurrencyTests {
  @Test func subscribersComingAndGoingOnSeveralThreadsEachSeeIncreasingValues() {
    let source = Observable(0)
    let driver = source.asDriver(scheduler: .immediate)
    let rounds = 200
    let logs = (0..<3).map { _ in RecordingLog<[Int]>() }

    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      if thread == 3 {
        for value in 1...2_000 { source.value = value }
        return
      }
      for _ in 0..<rounds {
        let seen = RecordingLog<Int>()
        let token = driver.drive { seen.append($0) }
        token.cancel()
        logs[thread].append(seen.events)
      }
    }

    for log in logs {
      #expect(log.events.count == rounds)
      for seen in log.events {
        #expect(seen.count <= 1 || zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
      }
    }
    #expect(source.observerCount == 0, "the last cancel ended the upstream registration")
  }

  @Test func aLongLivedSubscriberSeesEveryValueWhileOthersComeAndGo() {
    let source = Observable(0)
    let driver = source.asDriver(scheduler: .immediate)
    let steady = RecordingLog<Int>()
    let token = driver.drive { steady.append($0) }

    DispatchQueue.concurrentPerform(iterations: 3) { thread in
      if thread == 0 {
        for value in 1...2_000 { source.value = value }
      } else {
        for _ in 0..<300 { driver.drive { _ in }.cancel() }
      }
    }

    #expect(steady.events == Array(0...2_000))
    #expect(source.observerCount == 1)
    withExtendedLifetime(token) {}
  }
}
