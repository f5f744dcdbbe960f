import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

private final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var storage = 0
  func increment() { lock.withLock { storage += 1 } }
  var value: Int { lock.withLock { storage } }
}

/// Issue 12: no thread is conscripted into delivering another thread's stream (beyond one
/// combining budget, see `CombiningTests`), and a setter that a callback waits for is never
/// deadlocked.
@Suite("Fair delivery across threads")
struct FairDeliveryTests {
  @Test func eachThreadsChangesArriveOnceAndInTheOrderItMadeThem() async {
    await onItsOwnThread {
      // Thread A sets positive values, thread B negative ones, at the same time. Whichever thread
      // delivers them, every change arrives exactly once and each thread's in its own order.
      let source = Observable(0)
      let log = RecordingLog<Int>()
      let token = source.observe { value, _ in log.append(value) }
      runConcurrently(2) { index in
        let sign = index == 0 ? 1 : -1
        for step in 1...2_000 { source.value = sign * step }
      }
      let events = log.events
      #expect(events.count == 4_000)
      #expect(events.filter { $0 > 0 } == Array(1...2_000))
      #expect(events.filter { $0 < 0 } == (1...2_000).map { -$0 })
      withExtendedLifetime(token) {}
    }
  }

  @Test func aSetterThatACallbackWaitsForIsNotDeadlocked() async {
    await onItsOwnThread {
      // A callback on the delivering thread waits for another thread to set the same value: that
      // setter cannot have its turn while the round runs, so once the round makes no progress it
      // queues its whole change for the deliverer and returns, and the round goes on.
      let source = Observable(0)
      let log = RecordingLog<Int>()
      let token = source.observe { value, _ in
        log.append(value)
        guard value == 1 else { return }
        let setter = runInBackground { source.value = 2 }
        #expect(setter.waitUntilFinished("the setter the callback waits for"))
        // Queued, not stored: it is stored when its propagation runs, after this one.
        #expect(source.value == 1)
        log.append(-1)  // the round of 1 goes on
      }
      source.value = 1
      // Change 2 was queued for this thread, which ran it after the propagation of 1.
      #expect(log.events == [1, -1, 2])
      withExtendedLifetime(token) {}
    }
  }

  @Test func aMainThreadStyleSetReturnsPromptlyWhileAProducerFloods() async {
    await onItsOwnThread {
      // One thread floods the observable; another sets now and then, as a UI thread would. Each of
      // its sets delivers its own round and returns; the producer finishes.
      let source = Observable(0)
      let calls = Counter()
      let token = source.observe { _, _ in calls.increment() }
      let producer = runInBackground {
        for step in 1...20_000 { source.value = step }
      }
      for step in 1...200 { source.value = -step }
      #expect(producer.waitUntilFinished("the producer"))
      #expect(calls.value == 20_200)
      withExtendedLifetime(token) {}
    }
  }

  @Test func aLaneYieldsTheMainQueueAfterAFrameBudget() async {
    await onItsOwnThread {
      // Each value takes 10 ms to handle, more than one turn's 8 ms budget: every turn of the
      // manual main queue delivers one value and schedules the next turn, in order, none dropped.
      let main = ManualScheduler()
      let source = Observable(0)
      let driver = source.asDriver(scheduler: .manual(main))
      let seen = RecordingLog<Int>()
      let token = main.runOnMain {
        driver.drive { value in
          seen.append(value)
          usleep(10_000)
        }
      }
      runInBackground {
        for value in 1...5 { source.value = value }
      }.waitUntilFinished("the producer")
      var turns = 0
      while main.runNext() { turns += 1 }
      #expect(seen.events == [0, 1, 2, 3, 4, 5])
      #expect(turns >= 5)
      withExtendedLifetime(token) {}
    }
  }
}
