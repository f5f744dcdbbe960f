import Dispatch
import PropertyObservation
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A thread identity that can be compared from any thread.
private struct ThreadMark: Equatable, @unchecked Sendable {
  let raw = pthread_self()
  static func == (lhs: ThreadMark, rhs: ThreadMark) -> Bool { pthread_equal(lhs.raw, rhs.raw) != 0 }
}

/// A box for a value handed between threads that are ordered by semaphores.
private final class Shared<Value>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}

private func waitOrFail(_ semaphore: DispatchSemaphore, _ what: Comment) {
  let result = semaphore.wait(timeout: .now() + 20)
  #expect(result == .success, what)
}

@Suite("Observable across threads")
struct ObservableConcurrencyTests {
  @Test func aSetFromAnotherThreadDuringARoundIsStoredQueuedAndDeliveredByTheDeliveringThread() {
    let observable = Observable(0)
    let inRound = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let deliveries = RecordingLog<(Int, ThreadMark)>()
    let deliveringThread = Shared<ThreadMark?>(nil)
    let token = observable.observe { value, _ in
      deliveries.append((value, ThreadMark()))
      if value == 1 {
        inRound.signal()
        release.wait()
      }
    }
    DispatchQueue.global().async {
      deliveringThread.value = ThreadMark()
      observable.value = 1
      finished.signal()
    }
    waitOrFail(inRound, "the first round started")
    // The delivering thread is blocked inside its callback; this set must not wait for it.
    observable.value = 2
    #expect(observable.value == 2)
    #expect(deliveries.events.map(\.0) == [1])
    release.signal()
    waitOrFail(finished, "the delivering thread finished")
    #expect(deliveries.events.map(\.0) == [1, 2])
    #expect(deliveries.events.allSatisfy { $0.1 == deliveringThread.value })
    withExtendedLifetime(token) {}
  }

  @Test func aRegistrationDuringAnotherThreadsRoundGetsItsInitialValueSynchronouslyAndFirst() {
    let observable = Observable(0)
    let inRound = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let token = observable.observe { value, _ in
      if value == 1 {
        inRound.signal()
        release.wait()
      }
    }
    DispatchQueue.global().async {
      observable.value = 1
      finished.signal()
    }
    waitOrFail(inRound, "the first round started")
    observable.value = 2
    let late = RecordingLog<Call>()
    let lateToken = observable.observe(options: [.initial, .new]) { value, option in
      late.append(Call("late", ObservableOptionsName(option), value))
    }
    // Synchronously, although another thread is in the middle of a round.
    #expect(late.events == [Call("late", .initial, 2)])
    observable.value = 3
    release.signal()
    waitOrFail(finished, "the delivering thread finished")
    #expect(late.events == [Call("late", .initial, 2), Call("late", .new, 3)])
    withExtendedLifetime((token, lateToken)) {}
  }

  @Test func theDeliveringThreadHandsTheQueueToARegistrationStillInItsInitialCallback() {
    let observable = Observable(0)
    let (inRound, releaseRound) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let (inInitial, releaseInitial) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let (setterDone, registrarDone) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let first = RecordingLog<(Int, ThreadMark)>()
    let late = RecordingLog<(Call, ThreadMark)>()
    let registrar = Shared<ThreadMark?>(nil)
    let lateToken = Shared<ObservationToken?>(nil)
    let token = observable.observe { value, _ in
      first.append((value, ThreadMark()))
      if value == 1 {
        inRound.signal()
        releaseRound.wait()
      }
    }
    DispatchQueue.global().async {
      observable.value = 1
      setterDone.signal()
    }
    waitOrFail(inRound, "round 1 started")
    observable.value = 2  // queued behind round 1
    DispatchQueue.global().async {
      registrar.value = ThreadMark()
      lateToken.value = observable.observe(options: [.initial, .new]) { value, option in
        late.append((Call("late", ObservableOptionsName(option), value), ThreadMark()))
        if option == .initial {
          inInitial.signal()
          releaseInitial.wait()
        }
      }
      registrarDone.signal()
    }
    waitOrFail(inInitial, "the late registration's .initial started")
    observable.value = 3  // queued behind the late registration
    releaseRound.signal()
    // The setter finishes rounds 1 and 2, reaches the registration whose .initial is still
    // running, and returns instead of waiting for it.
    waitOrFail(setterDone, "the first setter returned while .initial was still running")
    #expect(first.events.map(\.0) == [1, 2])
    releaseInitial.signal()
    waitOrFail(registrarDone, "the registering thread finished")
    #expect(first.events.map(\.0) == [1, 2, 3])
    #expect(late.events.map(\.0) == [Call("late", .initial, 2), Call("late", .new, 3)])
    #expect(late.events.allSatisfy { $0.1 == registrar.value })
    #expect(first.events.last?.1 == registrar.value)
    withExtendedLifetime((token, lateToken)) {}
  }

  @Test func aRemovalFromAnotherThreadDuringARoundStopsDeliveryByTheNextRound() {
    let observable = Observable(0)
    let inRound = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let owner = Owner()
    let later = RecordingLog<Int>()
    let token = observable.observe { value, _ in
      if value == 1 {
        inRound.signal()
        release.wait()
      }
    }
    observable.addObserver(owner) { value, _ in later.append(value) }
    DispatchQueue.global().async {
      observable.value = 1
      finished.signal()
    }
    waitOrFail(inRound, "the first round started")
    observable.removeObserver(owner)
    observable.value = 2
    release.signal()
    waitOrFail(finished, "the delivering thread finished")
    #expect(!later.events.contains(2))
    #expect(observable.observerCount == 1)
    withExtendedLifetime(token) {}
  }

  @Test func roundsNeverInterleaveAndEveryObserverSeesEveryChangeInOrder() async {
    let observable = Observable(0)
    let threads = 4
    let perThread = 2_000
    // Unsynchronized on purpose: if two rounds overlapped, ThreadSanitizer would report these
    // accesses, and `isInRound` would catch it without the sanitizer.
    var isInRound = false
    var overlaps = 0
    var first: [Int] = []
    var last: [Int] = []
    let opener = observable.observe(options: [.old]) { _, _ in
      if isInRound { overlaps += 1 }
      isInRound = true
    }
    let recorder = observable.observe { value, _ in first.append(value) }
    let closer = observable.observe { value, _ in
      last.append(value)
      isInRound = false
    }
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<threads {
        group.addTask {
          for _ in 0..<perThread { observable.update { $0 += 1 } }
        }
      }
    }
    #expect(overlaps == 0)
    #expect(observable.value == threads * perThread)
    #expect(first == Array(1...(threads * perThread)))
    #expect(last == first)
    withExtendedLifetime((opener, recorder, closer)) {}
  }

  @Test func registrationsMadeWhileOtherThreadsSetSeeAGaplessIncreasingSequence() async {
    let observable = Observable(0)
    let logs = RecordingLog<RecordingLog<Int>>()
    let setters = 2
    let sets = 3_000
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<setters {
        group.addTask {
          for _ in 0..<sets { observable.update { $0 += 1 } }
        }
      }
      // Owners come and go, registered with .initial, removed or simply dropped.
      group.addTask {
        for round in 0..<300 {
          let owner = Owner()
          let log = RecordingLog<Int>()
          logs.append(log)
          observable.addObserver(owner, options: [.initial, .new]) { value, _ in log.append(value) }
          if round.isMultiple(of: 2) { observable.removeObserver(owner) }
        }
      }
      // Tokens come and go, some kept in a bag that is emptied now and then.
      group.addTask {
        let bag = ObservationBag()
        for round in 0..<300 {
          let log = RecordingLog<Int>()
          logs.append(log)
          let token = observable.observe(options: [.initial, .new]) { value, _ in log.append(value)
          }
          if round.isMultiple(of: 3) { token.store(in: bag) }
          if round.isMultiple(of: 50) { bag.removeAll() }
        }
      }
    }
    #expect(observable.value == setters * sets)
    for log in logs.events {
      let values = log.events
      #expect(!values.isEmpty, "every registration received its initial value")
      #expect(zip(values, values.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(values)")
    }
  }

  @Test func concurrentReadsSetsAndCountsAreSafe() async {
    let observable = Observable("start")
    let owner = Owner()
    let count = RecordingLog<String>()
    observable.addObserver(owner) { value, _ in count.append(value) }
    await withTaskGroup(of: Void.self) { group in
      for thread in 0..<3 {
        group.addTask {
          for index in 0..<500 {
            observable.value = "\(thread)-\(index)"
            _ = observable.value
            _ = observable.observerCount
            _ = observable.description
          }
        }
      }
    }
    #expect(count.events.count == 1_500)
    #expect(observable.observerCount == 1)
  }
}
