import Dispatch
import PropertyObservation
import TestSupport
import Testing

@Suite("flatMapLatest")
struct FlatMapLatestTests {
  // MARK: - Behaviour

  @Test func followsTheSelectedObservableAndSwitchesAtOnce() {
    let names = [Observable("Ray"), Observable("Ada")]
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { names[$0] }
    #expect(selectedName.value == "Ray")

    let log = RecordingLog<String>()
    let token = selectedName.observe(options: [.initial, .new]) { name, option in
      log.append("\(option) \(name)")
    }
    names[0].value = "Raymond"
    selection.value = 1
    names[0].value = "Ray M."  // no longer selected
    names[1].value = "Ada L."
    #expect(
      log.events == ["[.initial] Ray", "[.new] Raymond", "[.new] Ada", "[.new] Ada L."])
    #expect(selectedName.value == "Ada L.")
    token.cancel()
  }

  @Test func switchingEndsThePreviousRegistrationBeforeTheSetReturns() {
    let names = [Observable("Ray"), Observable("Ada")]
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { names[$0] }
    #expect(names.map(\.observerCount) == [1, 0])
    selection.value = 1
    #expect(names.map(\.observerCount) == [0, 1])
    selection.value = 0
    #expect(names.map(\.observerCount) == [1, 0])
    withExtendedLifetime(selectedName) {}
  }

  @Test func selectingTheSameObservableAgainPublishesItsValueAgain() {
    let name = Observable("Ray")
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { _ in name }
    let log = RecordingLog<String>()
    let token = selectedName.observe { value, _ in log.append(value) }
    selection.value = 1
    name.value = "Ada"
    #expect(log.events == ["Ray", "Ada"])
    #expect(name.observerCount == 1)
    token.cancel()
  }

  @Test func transformRunsOncePerChangeOfTheSelectionWhateverTheNumberOfObservers() {
    let names = [Observable("a"), Observable("b")]
    let selection = Observable(0)
    let calls = RecordingLog<Int>()
    let selectedName = selection.flatMapLatest { index in
      calls.append(index)
      return names[index]
    }
    let tokens = (0..<3).map { _ in selectedName.observe { _, _ in } }
    selection.value = 1
    names[1].value = "c"
    #expect(calls.events == [0, 1])
    withExtendedLifetime(tokens) {}
  }

  @Test func derivedInnerObservablesAndChainsWork() {
    let scores = [Observable(1), Observable(2)]
    let selection = Observable(0)
    let text = selection.flatMapLatest { index in scores[index].map { "#\(index): \($0)" } }
      .removeDuplicates()
    let log = RecordingLog<String>()
    let token = text.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    scores[0].value = 5
    scores[0].value = 5
    selection.value = 1
    scores[1].value = 7
    #expect(log.events == ["#0: 1", "#0: 5", "#1: 2", "#1: 7"])
    token.cancel()
  }

  // MARK: - Re-entrancy

  @Test func aSwitchMadeByAnObserverIsPublishedAfterTheCurrentValueInOrder() {
    let names = [Observable("Ray"), Observable("Ada"), Observable("Grace")]
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { names[$0] }
    // Whenever Ada is shown, the first observer moves the selection on.
    let mover = selectedName.observe { name, _ in
      if name == "Ada" { selection.value = 2 }
    }
    let log = RecordingLog<String>()
    let recorder = selectedName.observe { name, _ in log.append(name) }
    selection.value = 1
    #expect(log.events == ["Ada", "Grace"])
    #expect(names.map(\.observerCount) == [0, 0, 1])
    withExtendedLifetime((mover, recorder)) {}
  }

  @Test func aSetOfTheSelectedObservableByAnObserverIsPublishedInOrder() {
    let counts = [Observable(0), Observable(10)]
    let selection = Observable(0)
    let selected = selection.flatMapLatest { counts[$0] }
    // Counts up the selected observable to a multiple of 3, from inside the derived rounds.
    let stepper = selected.observe { value, _ in
      if value % 3 != 0 { counts[selection.value].value = value + 1 }
    }
    let log = RecordingLog<Int>()
    let recorder = selected.observe { value, _ in log.append(value) }
    counts[0].value = 1
    selection.value = 1
    #expect(log.events == [1, 2, 3, 10, 11, 12])
    withExtendedLifetime((stepper, recorder)) {}
  }

  @Test func aTransformThatSetsTheSelectedObservableStillPublishesEachValueOnce() {
    let counts = [Observable(0), Observable(0)]
    let selection = Observable(0)
    let selected = selection.flatMapLatest { index in
      counts[index].value += 1  // the new selection is touched as it is selected
      return counts[index]
    }
    let log = RecordingLog<Int>()
    let token = selected.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    selection.value = 1
    #expect(log.events == [1, 1])
    #expect(selected.value == 1)
    counts[1].value = 5
    #expect(log.events == [1, 1, 5])
    token.cancel()
  }

  // MARK: - Lifetimes

  @Test func anInnerObservableBuiltByTheTransformGoesAtTheSwitch() {
    let scores = [Observable(1), Observable(2)]
    let selection = Observable(0)
    let built = WeakReferences<ReadOnlyObservable<String>>()
    let text = selection.flatMapLatest { index in
      let inner = scores[index].map { "\($0)" }
      built.append(inner)
      return inner
    }
    #expect(built.liveCount == 1)
    selection.value = 1
    #expect(built.liveCount == 1, "the first inner observable is released at the switch")
    #expect(scores.map(\.observerCount) == [0, 1])
    withExtendedLifetime(text) {}
  }

  @Test func theDerivedObservableKeepsItsSourcesAliveAndGoesWithItsLastUser() {
    weak var weakSelection: Observable<Int>?
    weak var weakInner: Observable<String>?
    weak var weakDerived: ReadOnlyObservable<String>?
    let log = RecordingLog<String>()
    do {
      let derived: ReadOnlyObservable<String>
      do {
        let selection = Observable(0)
        let inner = Observable("Ray")
        weakSelection = selection
        weakInner = inner
        derived = selection.flatMapLatest { _ in inner }
      }
      weakDerived = derived
      #expect(weakSelection != nil)
      #expect(weakInner != nil)
      let token = derived.observe { name, _ in log.append(name) }
      weakInner?.value = "Ada"
      token.cancel()
    }
    #expect(log.events == ["Ada"])
    #expect(weakDerived == nil)
    #expect(weakSelection == nil)
    #expect(weakInner == nil)
  }

  @Test func releasingTheDerivedObservableEndsBothRegistrations() {
    let selection = Observable(0)
    let names = [Observable("Ray"), Observable("Ada")]
    weak var weakDerived: ReadOnlyObservable<String>?
    do {
      let derived = selection.flatMapLatest { names[$0] }
      weakDerived = derived
      #expect(selection.observerCount == 1)
      #expect(names[0].observerCount == 1)
    }
    #expect(weakDerived == nil)
    #expect(selection.observerCount == 0)
    #expect(names.map(\.observerCount) == [0, 0])
    selection.value = 1
    #expect(names.map(\.observerCount) == [0, 0])
  }

  @Test func aTokenOnAnInlineChainKeepsItAliveUntilCancelled() {
    let selection = Observable(0)
    let names = [Observable("Ray"), Observable("Ada")]
    let log = RecordingLog<String>()
    let token = selection.flatMapLatest { names[$0] }.observe { name, _ in log.append(name) }
    selection.value = 1
    token.cancel()
    selection.value = 0
    names[1].value = "Grace"
    #expect(log.events == ["Ada"])
    #expect(selection.observerCount == 0)
    #expect(names.map(\.observerCount) == [0, 0])
  }

  // MARK: - Threads

  @Test func aSwitchWaitsForThePropagationOfTheOldInnerInFlightOnAnotherThread() async {
    await onItsOwnThread {
      let old = Observable("old 0")
      let new = Observable("new 0")
      let selection = Observable(false)
      let round = Gate("the old inner's round")
      // Registered before the derived observable: the old inner's round stops here, before it
      // reaches the derived observable's registration.
      let blocker = old.observe { value, _ in
        if value == "old 1" { round.block() }
      }
      let selected = selection.flatMapLatest { $0 ? new : old }
      let log = RecordingLog<String>()
      let recorder = selected.observe { value, _ in log.append(value) }
      round.runOnAnotherThread {
        old.value = "old 1"
      } whileBlocked: {
        // The old inner's propagation holds the graph, and waits for this block: the switch is
        // queued, whole, behind it.
        selection.value = true
        #expect(selected.value == "old 0")
      }
      // The old inner's change came first, then the switch: never a value of the old inner
      // after the switch.
      #expect(log.events == ["old 1", "new 0"])
      #expect(selected.value == "new 0")
      new.value = "new 1"
      #expect(log.events == ["old 1", "new 0", "new 1"])
      #expect(old.observerCount == 1, "only the blocker is left on the old inner")
      withExtendedLifetime((blocker, recorder)) {}
    }
  }

  /// A switch into a graph whose propagation is stuck in a callback (here, until this thread is
  /// done) cannot wait for it and joins it all the same. A set this thread then makes into the
  /// observable the stuck thread is delivering is delivered by that thread, after its round
  /// (the Threading article's one case of overlapping propagations), and the program goes on.
  @Test func aSetIntoAGraphASwitchJoinedWhileItsPropagationWasStuckIsDeliveredByThatPropagation()
    async
  {
    await onItsOwnThread {
      let (x, y, selection) = (Observable(0), Observable(-1), Observable(false))
      let round = Gate("x's round")
      let xLog = RecordingLog<Int>()
      let blocker = x.observe { value, _ in
        xLog.append(value)
        if value == 1 { round.block() }
      }
      let selected = selection.flatMapLatest { $0 ? x : y }
      let log = RecordingLog<Int>()
      let recorder = selected.observe { value, _ in log.append(value) }
      round.runOnAnotherThread {
        x.value = 1
      } whileBlocked: {
        selection.value = true
        x.value = 2
        #expect(xLog.events == [1], "x = 2 was delivered before x = 1's round ended")
      }
      #expect(xLog.events == [1, 2])
      #expect(log.events == [1, 2])
      #expect(selected.value == 2)
      withExtendedLifetime((blocker, recorder)) {}
    }
  }

  @Test func switchingWhileTheOldInnerIsSetFromAnotherThreadNeverGoesBack() async {
    await onItsOwnThread {
      for _ in 0..<20 {
        let old = Observable(0)
        let new = Observable(-1)
        let selection = Observable(false)
        let selected = selection.flatMapLatest { $0 ? new : old }
        let log = RecordingLog<Int>()
        let token = selected.observe { value, _ in log.append(value) }
        let producer = runInBackground {
          for value in 1...300 { old.value = value }
        }
        selection.value = true
        new.value = -2
        producer.waitUntilFinished()
        let events = log.events
        // Old values count up; once a new value appears, no old one follows.
        let firstNew = events.firstIndex { $0 < 0 } ?? events.endIndex
        // The switch may be made by the producer's thread after `new` became -2: then -1 is
        // never published.
        #expect(events[firstNew...].allSatisfy { $0 < 0 })
        #expect(events.last == -2)
        #expect(events[..<firstNew].allSatisfy { $0 > 0 })
        #expect(zip(events[..<firstNew], events[..<firstNew].dropFirst()).allSatisfy { $0 < $1 })
        #expect(selected.value == -2)
        #expect(old.observerCount == 0)
        token.cancel()
      }
    }
  }

  @Test func twoSwitchesIntoEachOthersGraphFromTwoThreadsTakeEffectOneAfterTheOther() async {
    await onItsOwnThread {
      let a = Observable(0)
      let b = Observable(0)
      let (aStart, bStart) = (Observable(-1), Observable(-2))
      // Each switches into the other's graph when its own selection changes.
      let followsB = a.flatMapLatest { $0 == 0 ? aStart : b }
      let followsA = b.flatMapLatest { $0 == 0 ? bStart : a }
      let (followsBLog, followsALog) = (RecordingLog<Int>(), RecordingLog<Int>())
      let recorders = [
        followsB.observe { value, _ in followsBLog.append(value) },
        followsA.observe { value, _ in followsALog.append(value) },
      ]
      // Each set's round waits for the other's round to start, so that both propagations hold
      // their graphs when their switches cross: neither switch may then read the value the
      // other propagation stored. The wait is bounded, for a set that does not start its round
      // before the other propagation ends.
      let (aEntered, bEntered) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
      let rendezvous = [
        a.observe { _, _ in
          aEntered.signal()
          _ = bEntered.wait(timeout: .now() + .milliseconds(200))
        },
        b.observe { _, _ in
          bEntered.signal()
          _ = aEntered.wait(timeout: .now() + .milliseconds(200))
        },
      ]
      runConcurrently(2) { thread in
        if thread == 0 { a.value = 1 } else { b.value = 1 }
      }
      // `a` first: `followsB` switches to `b` as it was (0), then follows `b`'s change, and
      // `followsA` switches to `a` as it is (1). `b` first: the mirror image.
      let logs = (followsBLog.events, followsALog.events)
      #expect(logs == ([0, 1], [1]) || logs == ([1], [0, 1]), "\(logs)")
      #expect((followsB.value, followsA.value) == (1, 1))
      withExtendedLifetime((recorders, rendezvous)) {}
    }
  }

  @Test func switchesAndInnerSetsFromSeveralThreadsSettleOnTheLastSelection() async {
    await onItsOwnThread {
      let inners = (0..<4).map { Observable($0 * 1000) }
      let selection = Observable(0)
      let selected = selection.flatMapLatest { inners[$0] }
      let log = RecordingLog<Int>()
      let token = selected.observe { value, _ in log.append(value) }
      runConcurrently(3) { thread in
        for step in 1...200 {
          if thread == 0 {
            selection.value = step % 4
          } else {
            inners[(step + thread) % 4].update { $0 += 1 }
          }
        }
      }
      let last = selection.value
      #expect(selected.value == inners[last].value)
      #expect(inners.map(\.observerCount) == (0..<4).map { $0 == last ? 1 : 0 })
      // Each inner only counts up, so a value below the last one published from the same inner
      // would be a value of an older registration published late.
      var latest: [Int: Int] = [:]
      for value in log.events {
        #expect(value >= latest[value / 1000, default: 0])
        latest[value / 1000] = value
      }
      token.cancel()
    }
  }
}

/// Weak references to objects a test created, to count how many are still alive.
private final class WeakReferences<Object: AnyObject>: @unchecked Sendable {
  private struct Reference {
    weak var object: Object?
  }

  private let log = RecordingLog<Reference>()

  func append(_ object: Object) {
    log.append(Reference(object: object))
  }

  var liveCount: Int {
    log.events.filter { $0.object != nil }.count
  }
}
