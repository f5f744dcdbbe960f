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

/// A box for a value handed between threads that are ordered by gates.
private final class Shared<Value>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}

@Suite("Observable across threads")
struct ObservableConcurrencyTests {
  @Test func aSetterWaitsForAnotherThreadsRoundThenDeliversItsOwnChange() async {
    await onItsOwnThread {
      let observable = Observable(0)
      let round = Gate("the first round")
      let deliveries = RecordingLog<(Int, ThreadMark)>()
      let token = observable.observe { value, _ in
        deliveries.append((value, ThreadMark()))
        if value == 1 { round.block() }
      }
      let secondSetter = Shared<ThreadMark?>(nil)
      let second = round.runOnAnotherThread {
        observable.value = 1
      } whileBlocked: {
        // Starts now, and waits for the turn until the round of 1 is over (or sets after it).
        runInBackground {
          secondSetter.value = ThreadMark()
          observable.value = 2
        }
      }
      #expect(second.waitUntilFinished("the second setter"))
      #expect(deliveries.events.map(\.0) == [1, 2])
      #expect(deliveries.events.last?.1 == secondSetter.value, "2 is delivered by its own setter")
      withExtendedLifetime(token) {}
    }
  }

  @Test func aSetThatWouldDeadlockWithTheRoundItWaitsForIsQueuedWholeAndDeliveredAfterIt() async {
    await onItsOwnThread {
      let observable = Observable(0)
      let round = Gate("the first round")
      let deliveries = RecordingLog<(Int, ThreadMark)>()
      let deliveringThread = Shared<ThreadMark?>(nil)
      let token = observable.observe { value, _ in
        deliveries.append((value, ThreadMark()))
        if value == 1 { round.block() }
      }
      round.runOnAnotherThread {
        deliveringThread.value = ThreadMark()
        observable.value = 1
      } whileBlocked: {
        // The delivering thread's callback waits for this block to end: the set gives up waiting
        // when the round makes no progress, queues its change, and returns before storing it.
        observable.value = 2
        #expect(observable.value == 1)
        #expect(deliveries.events.map(\.0) == [1])
      }
      #expect(deliveries.events.map(\.0) == [1, 2])
      #expect(deliveries.events.allSatisfy { $0.1 == deliveringThread.value })
      withExtendedLifetime(token) {}
    }
  }

  @Test func aRegistrationThatWouldDeadlockGetsInitialAtOnceThenEveryQueuedChange() async {
    await onItsOwnThread {
      let observable = Observable(0)
      let round = Gate("the first round")
      let token = observable.observe { value, _ in
        if value == 1 { round.block() }
      }
      let late = RecordingLog<Call>()
      let lateToken = round.runOnAnotherThread {
        observable.value = 1
      } whileBlocked: {
        observable.value = 2
        let lateToken = observable.observe(options: [.initial, .new]) { value, option in
          late.append(Call("late", ObservableOptionsName(option), value))
        }
        // Synchronously, with the value stored: the set of 2 is still queued behind round 1.
        #expect(late.events == [Call("late", .initial, 1)])
        observable.value = 3
        return lateToken
      }
      #expect(
        late.events == [Call("late", .initial, 1), Call("late", .new, 2), Call("late", .new, 3)])
      withExtendedLifetime((token, lateToken)) {}
    }
  }

  @Test func aRegistrationWhoseInitialBlocksGetsTheRoundsItMissedBeforeJoining() async {
    await onItsOwnThread {
      let observable = Observable(0)
      let round = Gate("round 1")
      let initial = Gate("the late registration's .initial")
      let first = RecordingLog<(Int, ThreadMark)>()
      let late = RecordingLog<(Call, ThreadMark)>()
      let registrar = Shared<ThreadMark?>(nil)
      let lateToken = Shared<ObservationToken?>(nil)
      let token = observable.observe { value, _ in
        first.append((value, ThreadMark()))
        if value == 1 { round.block() }
      }
      let setter = runInBackground { observable.value = 1 }
      round.waitUntilBlocked()
      observable.value = 2  // would deadlock: queued, whole, behind round 1
      let registering = runInBackground {
        registrar.value = ThreadMark()
        lateToken.value = observable.observe(options: [.initial, .new]) { value, option in
          late.append((Call("late", ObservableOptionsName(option), value), ThreadMark()))
          if option == .initial { initial.block() }
        }
      }
      initial.waitUntilBlocked()
      observable.value = 3  // queued as well
      round.open()
      // The setter delivers round 1, then the queued sets, without waiting for the registration
      // whose .initial is still running: it joins the list only once it has caught up.
      setter.waitUntilFinished("the first setter, while .initial was still running,")
      #expect(first.events.map(\.0) == [1, 2, 3])
      #expect(first.events.allSatisfy { $0.1 != registrar.value })
      #expect(late.events.map(\.0) == [Call("late", .initial, 1)])
      initial.open()
      registering.waitUntilFinished("the registering thread")
      // Rounds 2 and 3 ran while .initial did: the registering thread delivers them, in order,
      // before the entry joins the list.
      #expect(
        late.events.map(\.0) == [
          Call("late", .initial, 1), Call("late", .new, 2), Call("late", .new, 3),
        ])
      #expect(late.events.allSatisfy { $0.1 == registrar.value })
      observable.value = 4
      #expect(late.events.map(\.0).last == Call("late", .new, 4))
      withExtendedLifetime((token, lateToken)) {}
    }
  }

  @Test func aRemovalFromAnotherThreadDuringARoundStopsDeliveryByTheNextRound() async {
    await onItsOwnThread {
      let observable = Observable(0)
      let round = Gate("the first round")
      let owner = Owner()
      let later = RecordingLog<Int>()
      let token = observable.observe { value, _ in
        if value == 1 { round.block() }
      }
      observable.addObserver(owner) { value, _ in later.append(value) }
      round.runOnAnotherThread {
        observable.value = 1
      } whileBlocked: {
        observable.removeObserver(owner)
        observable.value = 2
      }
      #expect(!later.events.contains(2))
      #expect(observable.observerCount == 1)
      withExtendedLifetime(token) {}
    }
  }

  @Test func roundsNeverInterleaveAndEveryObserverSeesEveryChangeInOrder() async {
    let observable = Observable(0)
    let threads = 4
    let perThread = 2_000
    // Unsynchronized on purpose: if two rounds overlapped, ThreadSanitizer would report these
    // accesses, and `isInRound` would catch it without the sanitizer.
    let isInRound = Unsynchronized(false)
    let overlaps = Unsynchronized(0)
    let first = Unsynchronized<[Int]>([])
    let last = Unsynchronized<[Int]>([])
    let opener = observable.observe(options: [.old]) { _, _ in
      if isInRound.value { overlaps.value += 1 }
      isInRound.value = true
    }
    let recorder = observable.observe { value, _ in first.value.append(value) }
    let closer = observable.observe { value, _ in
      last.value.append(value)
      isInRound.value = false
    }
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<threads {
        group.addTask {
          for _ in 0..<perThread { observable.update { $0 += 1 } }
        }
      }
    }
    #expect(overlaps.value == 0)
    #expect(observable.value == threads * perThread)
    #expect(first.value == Array(1...(threads * perThread)))
    #expect(last.value == first.value)
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
