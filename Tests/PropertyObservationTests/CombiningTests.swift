import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

/// Which thread ran a callback, comparable from any thread.
private struct ThreadTag: Equatable, @unchecked Sendable {
  let raw = pthread_self()
  static func == (lhs: ThreadTag, rhs: ThreadTag) -> Bool { pthread_equal(lhs.raw, rhs.raw) != 0 }
}

/// Issue 28: bounded combining. A deliverer delivers the changes of waiting setters for them,
/// in storage order, within a budget (64 rounds, and no new one 200 µs after the first); a
/// waiting setter returns once its change has been delivered, by whichever thread; past the
/// budget the role goes to the setter of the next change, or to the delivery queue when nobody
/// waits for it.
@Suite("Bounded combining", .serialized)
struct CombiningTests {
  // In these tests the round of 1 on thread A starts the other setters itself and waits until
  // their changes are queued: a setter that saw no round for 100 ms would stop waiting and leave
  // its change to any deliverer, so the test must not hold the round from a task that may be
  // scheduled late.

  @Test func aWaitingSettersChangeIsDeliveredForItByTheDeliverer() async {
    // Thread B sets 2 while A's round of 1 runs, and waits. When A's round ends, A delivers 2
    // on its own thread, and B's set returns only after that.
    let source = Observable(0)
    let log = RecordingLog<(value: Int, thread: ThreadTag)>()
    let seenWhenBReturned = RecordingLog<[Int]>()
    let started = RecordingLog<BackgroundRun>()
    let token = source.observe { value, _ in
      log.append((value, ThreadTag()))
      guard value == 1 else { return }
      started.append(
        runInBackground(on: DispatchQueue(label: "B")) {
          source.value = 2
          seenWhenBReturned.append(log.events.map(\.value))
        })
      #expect(waitUntil { source.value == 2 }, "B did not set 2")
    }
    let a = runInBackground(on: DispatchQueue(label: "A")) { source.value = 1 }
    #expect(await a.finished("A"))
    #expect(await poll(for: testTimeout) { started.events.count == 1 })
    for run in started.events { #expect(await run.finished("B")) }
    let events = log.events
    #expect(events.map(\.value) == [1, 2])
    #expect(events.count == 2 && events[1].thread == events[0].thread, "2 was not delivered by A")
    #expect(seenWhenBReturned.events == [[1, 2]])
    withExtendedLifetime(token) {}
  }

  @Test func pastTheBudgetTheRoleGoesToTheNextWaitingSetter() async {
    // During A's round of 1, B sets 2, then C sets 3; each callback takes 1 ms, more than the
    // 200 µs budget. A delivers 2 for B, which spends the budget, and hands C the role: 3 is
    // delivered on C's thread.
    let source = Observable(0)
    let log = RecordingLog<(value: Int, thread: ThreadTag)>()
    let setters = RecordingLog<(run: BackgroundRun, thread: RecordingLog<ThreadTag>)>()
    func startSetter(_ name: String, setting value: Int) {
      let thread = RecordingLog<ThreadTag>()
      let run = runInBackground(on: DispatchQueue(label: name)) {
        thread.append(ThreadTag())
        source.value = value
      }
      setters.append((run, thread))
      #expect(waitUntil { source.value == value }, "\(name) did not set \(value)")
    }
    let token = source.observe { value, _ in
      log.append((value, ThreadTag()))
      if value == 1 {
        startSetter("B", setting: 2)
        startSetter("C", setting: 3)
      }
      usleep(1_000)
    }
    let a = runInBackground(on: DispatchQueue(label: "A")) { source.value = 1 }
    #expect(await a.finished("A"))
    #expect(await poll(for: testTimeout) { setters.events.count == 2 })
    for setter in setters.events { #expect(await setter.run.finished("a setter")) }
    let events = log.events
    #expect(events.map(\.value) == [1, 2, 3])
    #expect(events.count == 3 && events[1].thread == events[0].thread, "2 was not delivered by A")
    #expect(
      events.count == 3 && setters.events.count == 2
        && events[2].thread == setters.events[1].thread.events.first,
      "3 was not delivered by C")
    withExtendedLifetime(token) {}
  }

  @Test func pastTheBudgetAChangeNobodyWaitsForGoesToTheDeliveryQueue() async {
    // As above, but the second change is made inside a callback on queue C (so C does not
    // wait): once A has spent its budget on B's change, the library's delivery queue delivers
    // it. (Queues, not threads, are compared: a worker thread can serve several queues in turn.)
    let inner = Observable(0)
    let outer = Observable(0)
    let log = RecordingLog<(value: Int, queue: String?)>()
    let started = RecordingLog<BackgroundRun>()
    let outerToken = outer.observe { value, _ in inner.value = value }
    let innerToken = inner.observe { value, _ in
      log.append((value, DispatchQueue.getSpecific(key: queueName)))
      if value == 1 {
        started.append(runInBackground(on: .named("B")) { inner.value = 2 })
        #expect(waitUntil { inner.value == 2 }, "B did not set 2")
        // Sets `inner` inside `outer`'s callback: it does not wait.
        let c = runInBackground(on: .named("C")) { outer.value = 3 }
        #expect(c.waitUntilFinished("C"))
      }
      usleep(1_000)
    }
    let a = runInBackground(on: .named("A")) { inner.value = 1 }
    #expect(await a.finished("A"))
    #expect(await poll(for: testTimeout) { started.events.count == 1 })
    for run in started.events { #expect(await run.finished("B")) }
    #expect(await poll(for: testTimeout) { log.events.count == 3 })
    let events = log.events
    #expect(events.map(\.value) == [1, 2, 3])
    #expect(events.map(\.queue) == ["A", "A", nil], "nil stands for the delivery queue")
    withExtendedLifetime((innerToken, outerToken)) {}
  }

  @Test func aChangeDeliveredForAnotherThreadIsAPropagationOfItsOwn() async {
    // B's change, delivered by A, is not folded into A's propagation: the diamond publishes
    // once per change, and B's set returns only once the diamond has published its change.
    let source = Observable(0)
    let pair = source.combineLatest(source.map { $0 * 10 })
    let published = RecordingLog<String>()
    let pairToken = pair.observe { value, _ in published.append("\(value)") }
    let seenWhenBReturned = RecordingLog<[String]>()
    let started = RecordingLog<BackgroundRun>()
    let token = source.observe { value, _ in
      guard value == 1 else { return }
      started.append(
        runInBackground(on: DispatchQueue(label: "B")) {
          source.value = 2
          seenWhenBReturned.append(published.events)
        })
      #expect(waitUntil { source.value == 2 }, "B did not set 2")
    }
    let a = runInBackground(on: DispatchQueue(label: "A")) { source.value = 1 }
    #expect(await a.finished("A"))
    #expect(await poll(for: testTimeout) { started.events.count == 1 })
    for run in started.events { #expect(await run.finished("B")) }
    #expect(published.events == ["(1, 10)", "(2, 20)"])
    #expect(seenWhenBReturned.events == [["(1, 10)", "(2, 20)"]])
    withExtendedLifetime((token, pairToken)) {}
  }

  @Test func everySetReturnsAfterItsChangeWasDeliveredByWhicheverThread() {
    // Four threads set one observable at once; each set, when it returns, must find its value
    // seen by the observer (whoever delivered it), and each thread's values arrive in order.
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
