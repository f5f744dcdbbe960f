import Dispatch
import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// Which thread ran a callback, comparable from any thread.
private struct ThreadTag: Equatable, @unchecked Sendable {
  let raw = pthread_self()
  static func == (lhs: ThreadTag, rhs: ThreadTag) -> Bool { pthread_equal(lhs.raw, rhs.raw) != 0 }
}

/// Issue 28: admission and bounded combining. A set from another thread while a round runs
/// waits to be admitted, then stores its value and delivers its change itself; a thread that
/// keeps setting is admitted before it for one budget at most (200 µs). A change set inside a
/// callback on another thread, which nobody waits for, is delivered by the deliverer within its
/// budget (64 rounds, and no new one 200 µs after the first), then by the delivery queue.
@Suite("Admission and bounded combining", .serialized)
struct CombiningTests {
  // In these tests the round of 1 on thread A starts the other setters itself and waits for
  // them: a setter that saw no round for 100 ms would stop waiting, so the test must not hold
  // the round from a task that may be scheduled late.

  @Test func aSetterFromAnotherThreadStoresOnceTheRoundEndsThenDeliversItsChange() async {
    // Thread B sets 2 while A's round of 1 runs. B's value is not stored while the round runs;
    // when the round ends B is admitted, stores 2 and delivers it on its own thread, and its set
    // returns after that.
    let source = Observable(0)
    let log = RecordingLog<(value: Int, thread: ThreadTag)>()
    let seenWhenBReturned = RecordingLog<[Int]>()
    let bThread = RecordingLog<ThreadTag>()
    let started = RecordingLog<BackgroundRun>()
    let token = source.observe { value, _ in
      log.append((value, ThreadTag()))
      guard value == 1 else { return }
      started.append(
        runInBackground {
          bThread.append(ThreadTag())
          source.value = 2
          seenWhenBReturned.append(log.events.map(\.value))
        })
      #expect(waitUntil { source.settersWaitingForAdmission == 1 }, "B did not wait")
      #expect(source.value == 1, "B stored its value while A's round ran")
    }
    let a = runInBackground { source.value = 1 }
    #expect(await a.finished("A"))
    #expect(await poll(for: testTimeout) { started.events.count == 1 })
    for run in started.events { #expect(await run.finished("B")) }
    let events = log.events
    #expect(events.map(\.value) == [1, 2])
    #expect(events.count == 2 && events[1].thread == bThread.events.first, "B did not deliver 2")
    #expect(seenWhenBReturned.events == [[1, 2]])
    withExtendedLifetime(token) {}
  }

  @Test func aThreadThatKeepsSettingLetsAWaitingSetterIn() async {
    // Thread A sets without pause until B's set returned; thread B sets -1 once. B's set returns
    // while A still sets (A does not run out of time), and every value is delivered once, A's in
    // order.
    let source = Observable(0)
    let lock = NSLock()
    nonisolated(unsafe) var seen: [Int] = []
    let token = source.observe { value, _ in lock.withLock { seen.append(value) } }
    let bReturned = RecordingLog<Int>()
    let aRanOutOfTime = RecordingLog<Bool>()
    let a = runInBackground {
      let deadline = DispatchTime.now() + testTimeout
      var next = 1
      while bReturned.events.isEmpty {
        guard DispatchTime.now() < deadline else { return aRanOutOfTime.append(true) }
        source.value = next
        next += 1
      }
    }
    #expect(await poll(for: testTimeout) { lock.withLock { seen.count > 1_000 } })
    let b = runInBackground {
      source.value = -1
      bReturned.append(lock.withLock { seen.count })
    }
    #expect(await b.finished("B"))
    #expect(await a.finished("A"))
    let values = lock.withLock { seen }
    #expect(values.filter { $0 == -1 }.count == 1)
    let others = values.filter { $0 != -1 }
    #expect(others == Array(1...others.count), "A's values arrived out of order")
    #expect(aRanOutOfTime.events.isEmpty, "B was not let in while A kept setting")
    withExtendedLifetime(token) {}
  }

  @Test func pastTheBudgetAChangeNobodyWaitsForGoesToTheDeliveryQueue() async {
    await onItsOwnThread {
      // During A's round of 1, queue C sets `outer` to 3 and then 4, and `outer`'s callback sets
      // `inner` on C each time: inside a callback, so C does not wait, and nobody waits for those
      // changes. Each of `inner`'s callbacks takes 1 ms, more than the 200 µs budget: A delivers 3,
      // which starts the budget's clock, and the library's delivery queue delivers 4. (Queues, not
      // threads, are compared: a worker thread can serve several queues in turn.)
      let inner = Observable(0)
      let outer = Observable(0)
      let log = RecordingLog<(value: Int, queue: String?)>()
      let outerToken = outer.observe { value, _ in inner.value = value }
      let innerToken = inner.observe { value, _ in
        log.append((value, DispatchQueue.getSpecific(key: queueName)))
        if value == 1 {
          let c = runInBackground(on: .named("C")) {
            outer.value = 3
            outer.value = 4
          }
          #expect(c.waitUntilFinished("C"))
        }
        usleep(1_000)
      }
      let a = runInBackground(on: .named("A")) { inner.value = 1 }
      #expect(await a.finished("A"))
      #expect(await poll(for: testTimeout) { log.events.count == 3 })
      let events = log.events
      #expect(events.map(\.value) == [1, 3, 4])
      #expect(events.map(\.queue) == ["A", "A", nil], "nil stands for the delivery queue")
      withExtendedLifetime((innerToken, outerToken)) {}
    }
  }

  @Test func aChangeDeliveredForAnotherThreadIsAPropagationOfItsOwn() async {
    await onItsOwnThread {
      // During A's round of 1, thread C sets `trigger`, whose callback sets `source` to 2: a
      // change nobody waits for, which A delivers. It is not folded into A's propagation: the
      // diamond publishes once per change, each a pair that existed.
      let source = Observable(0)
      let trigger = Observable(0)
      let pair = source.combineLatest(source.map { $0 * 10 })
      let published = RecordingLog<String>()
      let pairToken = pair.observe { value, _ in published.append("\(value)") }
      let triggerToken = trigger.observe { value, _ in source.value = value }
      let token = source.observe { value, _ in
        guard value == 1 else { return }
        let c = runInBackground { trigger.value = 2 }
        #expect(c.waitUntilFinished("C"))
      }
      let a = runInBackground { source.value = 1 }
      #expect(await a.finished("A"))
      #expect(await poll(for: testTimeout) { published.events.count == 2 })
      #expect(published.events == ["(1, 10)", "(2, 20)"])
      withExtendedLifetime((token, pairToken, triggerToken)) {}
    }
  }

  @Test func everySetReturnsAfterItsChangeWasDelivered() async {
    await onItsOwnThread {
      // Four threads set one observable at once; each set, when it returns, must find its value
      // seen by the observer, and each thread's values arrive in order.
      let source = Observable(0)
      let lock = NSLock()
      nonisolated(unsafe) var lastSeen = [Int](repeating: 0, count: 4)
      nonisolated(unsafe) var outOfOrder = 0
      nonisolated(unsafe) var returnedEarly = 0
      let token = source.observe { value, _ in
        guard value > 0 else { return }
        let (thread, step) = (value / 1_000_000, value % 1_000_000)
        lock.withLock {
          if step != lastSeen[thread] + 1 { outOfOrder += 1 }
          lastSeen[thread] = step
        }
      }
      runConcurrently(4) { thread in
        for step in 1...5_000 {
          source.value = thread * 1_000_000 + step
          lock.withLock {
            if lastSeen[thread] < step { returnedEarly += 1 }
          }
        }
      }
      lock.withLock {
        #expect(lastSeen == [5_000, 5_000, 5_000, 5_000])
        #expect(outOfOrder == 0)
        #expect(returnedEarly == 0)
      }
      withExtendedLifetime(token) {}
    }
  }
}

/// Spins (sleeping 50 µs at a time) until `condition` holds, for at most `testTimeout` seconds;
/// for waits inside a round, which must stay short.
private func waitUntil(_ condition: () -> Bool) -> Bool {
  let deadline = DispatchTime.now() + testTimeout
  while !condition() {
    guard DispatchTime.now() < deadline else { return false }
    usleep(50)
  }
  return true
}

/// Names the test's own queues, so that a callback can tell which one it runs on.
private let queueName = DispatchSpecificKey<String>()

extension DispatchQueue {
  /// A serial queue that callbacks can recognize by `name` (see `queueName`).
  fileprivate static func named(_ name: String) -> DispatchQueue {
    let queue = DispatchQueue(label: name)
    queue.setSpecific(key: queueName, value: name)
    return queue
  }
}
