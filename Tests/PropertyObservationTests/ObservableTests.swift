import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// Registers an owner-based observer that appends every callback to `log` under `name`.
private func watch(
  _ observable: ReadOnlyObservable<Int>,
  _ owner: AnyObject,
  _ name: String,
  _ log: RecordingLog<Call>,
  removeIfExists: Bool = true,
  options: ObservableOptions = [.new],
  then reaction: @escaping @Sendable (Int, ObservableOptions) -> Void = { _, _ in }
) {
  observable.addObserver(owner, removeIfExists: removeIfExists, options: options) { value, option in
    log.append(Call(name, ObservableOptionsName(option), value))
    reaction(value, option)
  }
}

@Suite("Observable: the tutorial API and its ordering contract")
struct ObservableTests {
  // MARK: 1. .initial

  @Test func initialIsDeliveredBeforeAddObserverReturnsWithTheCurrentValue() {
    let observable = Observable(7)
    let log = RecordingLog<Call>()
    let owner = Owner()
    watch(observable, owner, "a", log, options: [.initial, .new])
    #expect(log.events == [Call("a", .initial, 7)])
    observable.value = 8
    #expect(log.events == [Call("a", .initial, 7), Call("a", .new, 8)])
  }

  @Test func initialOnlyRegistrationIsCalledOnceAndNotKept() {
    let observable = Observable(1)
    let log = RecordingLog<Call>()
    let owner = Owner()
    watch(observable, owner, "a", log, options: [.initial])
    observable.value = 2
    #expect(log.events == [Call("a", .initial, 1)])
    #expect(observable.observerCount == 0)
  }

  // MARK: 2. Round order

  @Test func everyOldCallbackRunsBeforeAnyNewCallbackInRegistrationOrder() {
    let observable = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(observable, as: "a", options: [.old, .new])
    recorder.record(observable, as: "b", options: [.new])
    recorder.record(observable, as: "c", options: [.old, .new])
    observable.value = 1
    let expected: [ObservationRecorder.Event] = [
      .old("a", 0), .old("c", 0), .new("a", 1), .new("b", 1), .new("c", 1),
    ]
    #expect(recorder.events == expected, "\(recorder.difference(from: expected) ?? "")")
  }

  @Test func roundsOfSeveralObservablesInterleaveInTheOrderTheSetsWereMade() {
    let name = Observable("Madeline")
    let score = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(name, as: "name", options: [.initial, .new])
    recorder.record(score, as: "score", options: [.old, .new])
    let bump = score.observe { value, _ in if value == 1 { name.value = "Amelia" } }
    score.value = 1
    let expected: [ObservationRecorder.Event] = [
      .initial("name", "Madeline"),
      .old("score", 0), .new("score", 1),
      // A set of another observable from a callback runs that observable's round at once.
      .new("name", "Amelia"),
    ]
    #expect(recorder.events == expected, "\(recorder.difference(from: expected) ?? "")")
    withExtendedLifetime(bump) {}
  }

  @Test func reAddingAnOwnerReplacesItsRegistrationAndMovesItToTheEnd() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b) = (Owner(), Owner())
    watch(observable, a, "a1", log)
    watch(observable, b, "b", log)
    watch(observable, a, "a2", log)
    observable.value = 1
    #expect(log.events == [Call("b", .new, 1), Call("a2", .new, 1)])
    #expect(observable.observerCount == 2)
  }

  @Test func addingWithoutRemoveIfExistsKeepsBothRegistrations() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let a = Owner()
    watch(observable, a, "a1", log)
    watch(observable, a, "a2", log, removeIfExists: false)
    observable.value = 1
    #expect(log.events == [Call("a1", .new, 1), Call("a2", .new, 1)])
    observable.removeObserver(a)
    observable.value = 2
    #expect(log.events.count == 2)
    #expect(observable.observerCount == 0)
  }

  @Test func everySetNotifiesEvenWhenTheValueIsUnchanged() {
    let observable = Observable(5)
    let log = RecordingLog<Call>()
    let owner = Owner()
    watch(observable, owner, "a", log)
    observable.value = 5
    observable.value = 5
    #expect(log.events == [Call("a", .new, 5), Call("a", .new, 5)])
  }

  // MARK: 3. Dead owners

  @Test func anObserverWhoseOwnerIsGoneIsNeverCalledAndIsPruned() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    weak var weakOwner: Owner?
    do {
      let owner = Owner()
      weakOwner = owner
      watch(observable, owner, "a", log)
      observable.value = 1
    }
    #expect(weakOwner == nil)
    #expect(observable.observerCount == 0)
    observable.value = 2
    #expect(log.events == [Call("a", .new, 1)])
    #expect(observable.description == "Observable<Int>(2, observers: 0)")
  }

  @Test func theObservableDoesNotRetainOwnersOrTheirClosuresCaptures() {
    let observable = Observable(0)
    weak var weakOwner: Owner?
    weak var weakCaptured: Owner?
    do {
      let owner = Owner()
      let captured = Owner()
      weakOwner = owner
      weakCaptured = captured
      observable.addObserver(owner) { _, _ in _ = captured }
    }
    #expect(weakOwner == nil)
    // The closure (and what it captured) is released when the entry is pruned on the next set.
    observable.value = 1
    #expect(weakCaptured == nil)
  }

  @Test func anOwnerDeallocatedMidRoundIsNotCalledForTheRestOfIt() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let first = Owner()
    let later = LockedValue<Owner?>(Owner())
    watch(observable, first, "first", log) { _, _ in later.value = nil }
    watch(observable, later.value!, "later", log)
    observable.value = 1
    #expect(log.events == [Call("first", .new, 1)])
    #expect(observable.observerCount == 1)
  }

  // MARK: 4. Re-entrancy

  @Test func aSetInsideACallbackIsDeliveredAfterTheCurrentRound() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b) = (Owner(), Owner())
    watch(observable, a, "a", log, options: [.old, .new]) { value, option in
      if option == .new && value == 1 { observable.value = 2 }
    }
    watch(observable, b, "b", log, options: [.old, .new])
    observable.value = 1
    #expect(
      log.events == [
        Call("a", .old, 0), Call("b", .old, 0), Call("a", .new, 1), Call("b", .new, 1),
        Call("a", .old, 1), Call("b", .old, 1), Call("a", .new, 2), Call("b", .new, 2),
      ])
    #expect(observable.value == 2)
  }

  @Test func nestedSetsFromSeveralObserversAreDeliveredInTheOrderTheyWereMade() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b, c) = (Owner(), Owner(), Owner())
    watch(observable, a, "a", log) { value, _ in if value == 1 { observable.value = 10 } }
    watch(observable, b, "b", log) { value, _ in if value == 1 { observable.value = 20 } }
    watch(observable, c, "c", log) { value, _ in if value == 10 { observable.value = 30 } }
    observable.value = 1
    let expected = [1, 10, 20, 30].flatMap { value in
      ["a", "b", "c"].map { Call($0, .new, value) }
    }
    #expect(log.events == expected)
    #expect(observable.value == 30)
  }

  @Test func aCallbackReadsTheLatestValueWhileItsOwnRoundCarriesTheOlderOne() {
    let observable = Observable(0)
    let (a, b) = (Owner(), Owner())
    let seen = RecordingLog<String>()
    observable.addObserver(a) { value, _ in
      if value == 1 { observable.value = 2 }
    }
    observable.addObserver(b) { value, _ in
      seen.append("round \(value), value \(observable.value)")
    }
    observable.value = 1
    #expect(seen.events == ["round 1, value 2", "round 2, value 2"])
  }

  @Test func anObserverCanRemoveItselfMidRound() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b) = (Owner(), Owner())
    watch(observable, a, "a", log, options: [.old, .new]) { _, _ in observable.removeObserver(a) }
    watch(observable, b, "b", log, options: [.old, .new])
    observable.value = 1
    observable.value = 2
    #expect(
      log.events == [
        Call("a", .old, 0), Call("b", .old, 0), Call("b", .new, 1),
        Call("b", .old, 1), Call("b", .new, 2),
      ])
  }

  @Test func aLaterObserverRemovedMidRoundIsNotCalledForTheRestOfIt() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b, c) = (Owner(), Owner(), Owner())
    watch(observable, a, "a", log) { _, _ in observable.removeObserver(b) }
    watch(observable, b, "b", log)
    watch(observable, c, "c", log)
    observable.value = 1
    #expect(log.events == [Call("a", .new, 1), Call("c", .new, 1)])
    #expect(observable.observerCount == 2)
  }

  @Test func anObserverAddedDuringARoundGetsItsInitialValueButNotThatRound() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, late) = (Owner(), Owner())
    watch(observable, a, "a", log) { value, _ in
      if value == 1 { watch(observable, late, "late", log, options: [.initial, .new]) }
    }
    observable.value = 1
    observable.value = 2
    #expect(
      log.events == [
        Call("a", .new, 1), Call("late", .initial, 1),
        Call("a", .new, 2), Call("late", .new, 2),
      ])
  }

  @Test func anObserverAddedAfterANestedSetSeesOnlyChangesMadeAfterIt() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, late) = (Owner(), Owner())
    watch(observable, a, "a", log) { value, _ in
      guard value == 1 else { return }
      observable.value = 2  // queued
      watch(observable, late, "late", log, options: [.initial, .old, .new])
    }
    observable.value = 1
    #expect(
      log.events == [
        Call("a", .new, 1), Call("late", .initial, 2), Call("a", .new, 2),
      ])
  }

  @Test func reAddingDuringARoundMovesTheRegistrationBehindTheCurrentRound() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b) = (Owner(), Owner())
    watch(observable, a, "a", log) { value, _ in
      if value == 1 { watch(observable, b, "b2", log) }
    }
    watch(observable, b, "b1", log)
    observable.value = 1
    observable.value = 2
    #expect(log.events == [Call("a", .new, 1), Call("a", .new, 2), Call("b2", .new, 2)])
  }

  @Test func aRegistrationMadeInsideInitialJoinsBehindTheOneBeingRegistered() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (outer, inner) = (Owner(), Owner())
    watch(observable, outer, "outer", log, options: [.initial, .new]) { _, option in
      guard option == .initial else { return }
      watch(observable, inner, "inner", log)
      observable.value = 1
    }
    #expect(
      log.events == [
        Call("outer", .initial, 0), Call("outer", .new, 1), Call("inner", .new, 1),
      ])
  }

  @Test func anObserverRemovedInsideItsOwnInitialIsNeverCalledAgain() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let owner = Owner()
    watch(observable, owner, "a", log, options: [.initial, .new]) { _, option in
      if option == .initial { observable.removeObserver(owner) }
    }
    observable.value = 1
    #expect(log.events == [Call("a", .initial, 0)])
    #expect(observable.observerCount == 0)
  }

  @Test func initialCallbackMaySetTheValueAndTheChangeIsDeliveredAfterIt() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, b) = (Owner(), Owner())
    watch(observable, a, "a", log)
    watch(observable, b, "b", log, options: [.initial, .new]) { value, option in
      if option == .initial { observable.value = value + 1 }
    }
    #expect(log.events == [Call("b", .initial, 0), Call("a", .new, 1), Call("b", .new, 1)])
  }

  // MARK: Bad input

  @Test func removingAnOwnerThatWasNeverAddedDoesNothing() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let (a, stranger) = (Owner(), Owner())
    watch(observable, a, "a", log)
    observable.removeObserver(stranger)
    observable.value = 1
    #expect(log.events == [Call("a", .new, 1)])
  }

  @Test func anEmptyOptionSetIsAcceptedAndNeverCalled() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let a = Owner()
    watch(observable, a, "a", log, options: [])
    observable.value = 1
    #expect(log.events.isEmpty)
    #expect(observable.observerCount == 0)
  }

  @Test func optionsDescribeThemselves() {
    #expect(ObservableOptions([.initial, .new]).description == "[.initial, .new]")
    #expect(ObservableOptions.old.rawValue == 2)
    #expect(ObservableOptions.new.rawValue == 4)
  }

  @Test func manyRegistrationsSurviveGrowthAndPruningInOrder() {
    let observable = Observable(0)
    var owners: [Owner] = (0..<100).map { _ in Owner() }
    let calls = RecordingLog<Int>()
    for (index, owner) in owners.enumerated() {
      observable.addObserver(owner) { _, _ in calls.append(index) }
    }
    // Drop every odd owner, then register more so the list has to grow past the dead entries.
    for index in stride(from: 99, through: 1, by: -2) { owners.remove(at: index) }
    let extra = (0..<100).map { _ in Owner() }
    for (index, owner) in extra.enumerated() {
      observable.addObserver(owner) { _, _ in calls.append(100 + index) }
    }
    observable.value = 1
    #expect(calls.events == Array(stride(from: 0, to: 100, by: 2)) + Array(100..<200))
    #expect(observable.observerCount == 150)
    // An optimised build may end an array's lifetime after its last use: keep the owners alive.
    withExtendedLifetime((owners, extra)) {}
  }
}
