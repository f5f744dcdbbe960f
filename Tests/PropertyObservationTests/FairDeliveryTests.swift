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
      // setter cannot have its turn while the round runs, so it leaves its change to the deliverer
      // after a short wait and returns, and the round goes on.
      let source = Observable(0)
      let log = RecordingLog<Int>()
      let token = source.observe { value, _ in
        log.append(value)
        guard value == 1 else { return }
        let setter = runInBackground { source.value = 2 }
        #expect(setter.waitUntilFinished("the setter the callback waits for"))
        #expect(source.value == 2)
        log.append(-1)  // the round of 1 goes on
      }
      source.value = 1
      // Change 2 was left to this thread, which delivered it after the round of 1.
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

  @Test func aChangeLeftToTheDeliveryQueueArrivesWhileTheGlobalQueuesAreTaken() async {
    await onItsOwnThread {
      // On Linux, libdispatch runs a global queue's work only while fewer threads than cores are
      // taken (blocked ones count) and adds threads about once a second: a delivery-queue job on
      // a global queue waited 0.9 s behind a busy producer, with setters waiting for it. Here the
      // global queues are taken for the whole test, and the change must still arrive.
      let blockerCount = 64
      let blockers = DispatchSemaphore(value: 0)
      for _ in 0..<blockerCount {
        DispatchQueue.global().async { _ = blockers.wait(timeout: .now() + testTimeout * 2) }
      }
      defer { for _ in 0..<blockerCount { blockers.signal() } }

      let outer = Observable(0)
      let inner = Observable(0)
      let seen = RecordingLog<Int>()
      let innerIsDelivering = DispatchSemaphore(value: 0)
      let nestedSetDone = DispatchSemaphore(value: 0)
      let innerToken = inner.observe { value, _ in
        seen.append(value)
        // The round of 5 outlasts the deliverer's combining budget, so the change after it, which
        // nobody waits for, goes to the delivery queue.
        if value == 5 { usleep(1_000) }
        guard value == 1 else { return }
        // Hold `inner`'s round until the other thread has set it from inside another round.
        innerIsDelivering.signal()
        _ = nestedSetDone.wait(timeout: .now() + testTimeout)
      }
      let outerToken = outer.observe { value, _ in inner.value = value * 2 }
      // Serial queues always get a thread, unlike the global queues taken above.
      let deliverer = runInBackground { inner.value = 1 }
      let waitingSetter = RecordingLog<BackgroundRun>()
      let nested = runInBackground {
        _ = innerIsDelivering.wait(timeout: .now() + testTimeout)
        waitingSetter.append(
          runInBackground { inner.value = 5 })
        let deadline = DispatchTime.now() + testTimeout
        while inner.value != 5 && DispatchTime.now() < deadline { usleep(50) }
        // `inner` is being delivered by the other thread: this set returns at once and its round
        // is left to the library's delivery queue.
        outer.value = 21
        nestedSetDone.signal()
      }
      #expect(nested.waitUntilFinished("the nested setter"))
      #expect(deliverer.waitUntilFinished("the deliverer"))
      for run in waitingSetter.events { #expect(run.waitUntilFinished("the waiting setter")) }
      let deadline = DispatchTime.now() + testTimeout
      while seen.events.count < 3 && DispatchTime.now() < deadline { usleep(1_000) }
      #expect(seen.events == [1, 5, 42])
      withExtendedLifetime((innerToken, outerToken)) {}
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
