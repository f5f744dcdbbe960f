import PropertyObservation
import Testing

@MainActor private final class TextOwner {
  var text = ""
}

/// Issue 13: removing registrations one by one, in any order, among thousands, through the
/// token slots and the owner index, always ends exactly the right ones. (Speed is measured by
/// the Benchmarks package, not here.)
@Suite("Registration at scale")
struct RegistrationAtScaleTests {
  @MainActor @Test func tokensCancelledInRandomOrderEndExactlyTheirOwnRegistrations() {
    let source = Observable(0)
    var called: Set<Int> = []
    var tokens: [Int: ObservationToken] = [:]
    for id in 0..<3_000 {
      tokens[id] = source.observe { _, _ in called.insert(id) }
    }
    var generator = SplitMix64(seed: 13)
    var order = Array(0..<3_000)
    order.shuffle(using: &generator)
    for (step, id) in order.enumerated() {
      tokens[id]?.cancel()
      tokens[id] = nil
      if step % 500 == 0 {
        called = []
        source.value = step
        #expect(called == Set(tokens.keys), "after \(step + 1) cancellations")
      }
    }
    #expect(source.observerCount == 0)
  }

  @MainActor @Test func ownersRemovedInRandomOrderEndExactlyTheirOwnRegistrations() {
    let source = Observable(0)
    let owners = (0..<2_000).map { _ in TextOwner() }
    var called: Set<Int> = []
    for (id, owner) in owners.enumerated() {
      source.addObserver(owner) { _, _ in called.insert(id) }
      // Replacing keeps one registration per owner.
      if id % 3 == 0 { source.addObserver(owner) { _, _ in called.insert(id) } }
    }
    #expect(source.observerCount == owners.count)
    var live = Set(owners.indices)
    var generator = SplitMix64(seed: 31)
    var order = Array(owners.indices)
    order.shuffle(using: &generator)
    for (step, id) in order.enumerated() {
      source.removeObserver(owners[id])
      live.remove(id)
      if step % 400 == 0 {
        called = []
        source.value = step
        #expect(called == live, "after \(step + 1) removals")
      }
    }
    #expect(source.observerCount == 0)
  }

  @MainActor @Test
  func removingAnOwnerFindsItsBindingsAndObserveWithRegistrationsBesideTheIndexedOnes() {
    let source = Observable("a")
    let owners = (0..<500).map { _ in TextOwner() }
    var calls: [Int: Int] = [:]
    for (id, owner) in owners.enumerated() {
      source.addObserver(owner) { _, _ in calls[id, default: 0] += 1 }
      if id % 2 == 0 { source.bind(to: owner, \.text) }
      if id % 5 == 0 { source.observe(with: owner) { _, _ in calls[id, default: 0] += 1 } }
    }
    for owner in owners[100..<400] { source.removeObserver(owner) }
    calls = [:]
    source.value = "b"
    #expect(Set(calls.keys) == Set(Array(0..<100) + Array(400..<500)))
    #expect(owners[150].text == "a")
    #expect(owners[450].text == "b")
  }

  @MainActor @Test func aNewOwnerAtADeadOwnersAddressReplacesNothingOfAnyoneElse() {
    let source = Observable(0)
    var calls: [String] = []
    let survivor = TextOwner()
    source.addObserver(survivor) { _, _ in calls.append("survivor") }
    for round in 0..<200 {
      do {
        let transient = TextOwner()
        source.addObserver(transient) { _, _ in calls.append("transient") }
      }
      // The next owner often reuses the dead one's address; its default registration replaces
      // only what that address registered.
      let next = TextOwner()
      source.addObserver(next) { _, _ in calls.append("next") }
      calls = []
      source.value = round
      #expect(calls == ["survivor", "next"])
      withExtendedLifetime(next) {}
    }
  }

  @MainActor @Test func registrationsOfDeadOwnersAreDroppedWhenTheListGrowsEvenWithoutASet() {
    // A list that only sees registrations stays bounded by its live owners: a full buffer
    // drops the entries of dead owners (releasing their closures) before growing, and the
    // slots they leave are filled by later registrations, which are then called exactly once.
    let source = Observable(0)
    let released = Counter()
    for _ in 0..<1_000 {
      let transient = TextOwner()
      let tracker = Tracker(released)
      source.addObserver(transient, removeIfExists: false) { _, _ in
        withExtendedLifetime(tracker) {}
      }
    }
    #expect(released.count > 0, "a full buffer dropped no dead owner's registration")
    let survivors = (0..<1_000).map { _ in TextOwner() }
    var calls = 0
    for survivor in survivors { source.addObserver(survivor) { _, _ in calls += 1 } }
    #expect(released.count >= 990, "\(released.count) of 1000 dead registrations released")
    source.value = 1
    #expect(calls == survivors.count)
    #expect(source.observerCount == survivors.count)
  }
}

extension RegistrationAtScaleTests {
  @MainActor @Test func deadOwnersAmongLivingOnesAreDroppedAsTheListGrowsWithoutASet() {
    // Every other owner dies at once: a regular pattern that a fixed sample would miss.
    let source = Observable(0)
    let released = Counter()
    var survivors: [TextOwner] = []
    for index in 0..<4_000 {
      let owner = TextOwner()
      let tracker = Tracker(released)
      source.addObserver(owner, removeIfExists: false) { _, _ in
        withExtendedLifetime(tracker) {}
      }
      if index % 2 == 0 { survivors.append(owner) }
    }
    #expect(released.count >= 1_500, "\(released.count) of 2000 dead registrations released")
    #expect(source.observerCount == survivors.count)
  }
}

@MainActor private final class Counter {
  var count = 0
}

/// Counts its own deinit, so a test sees when the closure that captured it is released.
private final class Tracker {
  let counter: Counter

  init(_ counter: Counter) {
    self.counter = counter
  }

  @MainActor deinit {
    counter.count += 1
  }
}

extension RegistrationAtScaleTests {
  @MainActor @Test func registrationsQueuedDuringARoundAreAllAppendedAndCalledInOrder() {
    // A round queues the registrations made by its callbacks and appends them when it ends:
    // a thousand of them cross the list's prepared slots several times over (debug builds
    // check the list's counters after every round).
    let source = Observable(0)
    let owners = (0..<1_000).map { _ in TextOwner() }
    var order: [Int] = []
    let starter = TextOwner()
    source.addObserver(starter) { value, _ in
      guard value == 1 else { return }
      for (id, owner) in owners.enumerated() {
        source.addObserver(owner) { _, _ in order.append(id) }
      }
    }
    source.value = 1
    #expect(order.isEmpty, "registrations made during a round are not called by it")
    source.value = 2
    #expect(order == Array(owners.indices))
    #expect(source.observerCount == owners.count + 1)
  }
}
