import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

@Suite("Tokens, bags and the other ways to observe")
struct ObservationTokenTests {
  @Test func aTokenRegistrationRunsUntilTheTokenIsCancelled() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let token = observable.observe(options: [.initial, .old, .new]) { value, option in
      log.append(Call("t", ObservableOptionsName(option), value))
    }
    observable.value = 1
    token.cancel()
    token.cancel()
    observable.value = 2
    #expect(log.events == [Call("t", .initial, 0), Call("t", .old, 0), Call("t", .new, 1)])
    #expect(observable.observerCount == 0)
  }

  @Test func releasingTheTokenEndsTheRegistration() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    do {
      let token = observable.observe { value, _ in log.append(Call("t", .new, value)) }
      observable.value = 1
      withExtendedLifetime(token) {}
    }
    observable.value = 2
    #expect(log.events == [Call("t", .new, 1)])
    #expect(observable.observerCount == 0)
  }

  @Test func aTokenKeepsItsObservableAliveAndReleasesItWhenGone() {
    weak var weakObservable: Observable<Int>?
    var token: ObservationToken?
    do {
      let observable = Observable(0)
      weakObservable = observable
      token = observable.observe { _, _ in }
    }
    #expect(weakObservable != nil)
    token = nil
    #expect(weakObservable == nil)
    _ = token
  }

  @Test func ownerAndTokenRegistrationsShareOneOrder() {
    let observable = Observable(0)
    let recorder = ObservationRecorder()
    let owner = Owner()
    let (token1, byOwner, token2):
      (@Sendable (Int) -> Void, @Sendable (Int) -> Void, @Sendable (Int) -> Void) = (
        recorder.sink("token1"), recorder.sink("owner"), recorder.sink("token2")
      )
    let first = observable.observe { value, _ in token1(value) }
    observable.observe(with: owner) { _, value in byOwner(value) }
    let second = observable.observe { value, _ in token2(value) }
    observable.value = 1
    #expect(recorder.events == [.new("token1", 1), .new("owner", 1), .new("token2", 1)])
    withExtendedLifetime((first, second)) {}
  }

  @MainActor @Test func aTokenCancelledMidRoundIsNotCalledForTheRestOfIt() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    var later: ObservationToken?
    let first = observable.observe { value, _ in
      log.append(Call("first", .new, value))
      later?.cancel()
    }
    later = observable.observe { value, _ in log.append(Call("later", .new, value)) }
    observable.value = 1
    #expect(log.events == [Call("first", .new, 1)])
    withExtendedLifetime(first) {}
  }

  /// With other registrations, the list is not compacted: the release must not wait for it.
  /// Alone, the token's entry sits in a fresh list's first slot, which was initialized with its
  /// own closure: nothing may keep that closure, and the slot must serve the next registration.
  @Test(arguments: [3, 0])
  func cancellingATokenReleasesWhatItsClosureCapturedAtOnce(otherRegistrations: Int) {
    let observable = Observable(0)
    let others = (0..<otherRegistrations).map { _ in observable.observe { _, _ in } }
    weak var weakCaptured: Owner?
    var token: ObservationToken?
    do {
      let captured = Owner()
      weakCaptured = captured
      token = observable.observe { _, _ in _ = captured }
    }
    #expect(weakCaptured != nil)
    token?.cancel()
    #expect(weakCaptured == nil, "released without waiting for a set")
    let log = RecordingLog<Call>()
    let next = observable.observe { value, _ in log.append(Call("next", .new, value)) }
    observable.value = 1
    #expect(log.events == [Call("next", .new, 1)])
    withExtendedLifetime((others, next)) {}
  }

  @Test func removingAnOwnerReleasesWhatItsClosureCapturedAtOnce() {
    let observable = Observable(0)
    let others = (0..<3).map { _ in observable.observe { _, _ in } }
    defer { withExtendedLifetime(others) {} }
    let owner = Owner()
    weak var weakCaptured: Owner?
    do {
      let captured = Owner()
      weakCaptured = captured
      observable.addObserver(owner) { _, _ in _ = captured }
    }
    observable.removeObserver(owner)
    #expect(weakCaptured == nil)
  }

  @MainActor @Test func releasingManyTokensOneByOneRemovesExactlyThoseTokens() {
    let observable = Observable(0)
    var calls: [Int] = []
    var tokens = (0..<1_000).map { index in
      observable.observe { _, _ in calls.append(index) }
    }
    // Release every token but each tenth, oldest first, as a bag emptying itself would.
    var kept: [ObservationToken] = []
    for (index, token) in tokens.enumerated() where index.isMultiple(of: 10) { kept.append(token) }
    tokens.removeAll()
    #expect(observable.observerCount == 100)
    observable.value = 1
    #expect(calls == Array(stride(from: 0, to: 1_000, by: 10)))
    withExtendedLifetime(kept) {}
  }

  @Test func aBagEndsEveryRegistrationItHolds() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    let bag = ObservationBag()
    observable.observe { value, _ in log.append(Call("a", .new, value)) }.store(in: bag)
    observable.observe { value, _ in log.append(Call("b", .new, value)) }.store(in: bag)
    #expect(bag.count == 2)
    observable.value = 1
    bag.removeAll()
    #expect(bag.isEmpty)
    observable.value = 2
    #expect(log.events == [Call("a", .new, 1), Call("b", .new, 1)])
  }

  @Test func releasingABagEndsItsRegistrations() {
    let observable = Observable(0)
    let log = RecordingLog<Call>()
    do {
      let bag = ObservationBag()
      observable.observe { value, _ in log.append(Call("a", .new, value)) }.store(in: bag)
      observable.value = 1
    }
    observable.value = 2
    #expect(log.events == [Call("a", .new, 1)])
  }

  @MainActor @Test func tokensCanBeKeptInASet() {
    let observable = Observable(0)
    var tokens = Set<ObservationToken>()
    var seen: [Int] = []
    observable.observe { value, _ in seen.append(value) }.store(in: &tokens)
    observable.value = 1
    tokens.removeAll()
    observable.value = 2
    #expect(seen == [1])
  }

  @MainActor @Test func theOwnerFormPassesTheOwnerWithoutRetainingIt() {
    @MainActor final class Controller {
      var titles: [String] = []
    }
    let title = Observable("a")
    weak var weakController: Controller?
    do {
      let controller = Controller()
      weakController = controller
      title.observe(with: controller, options: [.initial, .new]) { controller, value in
        controller.titles.append(value)
      }
      title.value = "b"
      #expect(controller.titles == ["a", "b"])
    }
    #expect(weakController == nil)
    title.value = "c"
    #expect(title.observerCount == 0)
  }

  @MainActor @Test func theOwnerFormIsRemovedWithItsOwner() {
    let observable = Observable(0)
    let owner = Owner()
    var seen: [Int] = []
    observable.observe(with: owner) { _, value in seen.append(value) }
    observable.observe(with: owner) { _, value in seen.append(-value) }
    observable.value = 1
    observable.removeObserver(owner)
    observable.value = 2
    #expect(seen == [1, -1])
  }

  @MainActor @Test func observeChangesDeliversOldAndNewTogetherAfterEveryOldCallback() {
    let observable = Observable(1)
    var log: [String] = []
    let owner = Owner()
    let token = observable.observeChanges { change in log.append("change \(change)") }
    observable.addObserver(owner, options: [.old]) { value, _ in log.append("old \(value)") }
    observable.value = 2
    observable.value = 3
    #expect(log == ["old 1", "change 1 → 2", "old 2", "change 2 → 3"])
    #expect(ObservedChange(oldValue: 1, newValue: 2) == ObservedChange(oldValue: 1, newValue: 2))
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func observeChangesIncludingInitialStartsWithTheCurrentValueAsOldAndNew() {
    let observable = Observable(1)
    var log: [String] = []
    let owner = Owner()
    observable.addObserver(owner, options: [.old]) { value, _ in log.append("old \(value)") }
    let token = observable.observeChanges(includingInitial: true) { change in
      log.append("change \(change)")
    }
    // Delivered inside the registering call, before any set.
    #expect(log == ["change 1 → 1"])
    observable.value = 2
    #expect(log == ["change 1 → 1", "old 1", "change 1 → 2"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func observeChangesWithoutInitialWaitsForTheFirstSet() {
    let observable = Observable(1)
    var log: [ObservedChange<Int>] = []
    let token = observable.observeChanges(includingInitial: false) { log.append($0) }
    #expect(log.isEmpty)
    observable.value = 2
    #expect(log == [ObservedChange(oldValue: 1, newValue: 2)])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func updateModifiesInPlaceAndNotifiesOnce() {
    let observable = Observable([1])
    var seen: [[Int]] = []
    let token = observable.observe { value, _ in seen.append(value) }
    observable.update { $0.append(2) }
    #expect(observable.value == [1, 2])
    #expect(seen == [[1, 2]])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func updateLeavesTheValueUnchangedWhenTheBodyThrows() {
    struct Failure: Error {}
    let observable = Observable(1)
    var calls = 0
    let token = observable.observe { _, _ in calls += 1 }
    #expect(throws: Failure.self) {
      try observable.update { value in
        value = 99
        throw Failure()
      }
    }
    #expect(observable.value == 1)
    #expect(calls == 0)
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aReadOnlyViewObservesTheSameValue() {
    let observable = Observable("x")
    let view: ReadOnlyObservable<String> = observable
    var seen: [String] = []
    let token = view.observe(options: [.initial, .new]) { value, _ in seen.append(value) }
    observable.value = "y"
    #expect(view.value == "y")
    #expect(seen == ["x", "y"])
    #expect(view.description == "Observable<String>(y, observers: 1)")
    let derived = observable.map(\.count)
    #expect(derived.description == "ReadOnlyObservable<Int>(1, observers: 0)")
    withExtendedLifetime(token) {}
  }
}
