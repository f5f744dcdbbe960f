import PropertyObservation
import Testing

@MainActor private final class Label {
  var text = ""
}

/// `removeIfExists` replaces only the owner's earlier `addObserver` registrations (the
/// tutorial's meaning); `removeObserver(_:)` ends everything the owner has.
@Suite("removeIfExists and removeObserver")
struct RemoveIfExistsTests {
  @MainActor @Test func addObserverReplacesTheOwnersEarlierAddObserverRegistration() {
    let source = Observable(0)
    let label = Label()
    var calls: [String] = []
    source.addObserver(label) { value, _ in calls.append("first \(value)") }
    source.addObserver(label) { value, _ in calls.append("second \(value)") }
    source.value = 1
    #expect(calls == ["second 1"])
    #expect(source.observerCount == 1)
  }

  @MainActor @Test func replacingAmongManyOwnersReleasesTheOldClosureAtOnceAndMovesToTheEnd() {
    let source = Observable(0)
    let labels = (0..<10).map { _ in Label() }
    var calls: [Int] = []
    for (number, label) in labels.enumerated() {
      source.addObserver(label) { _, _ in calls.append(number) }
    }
    final class Capture {}
    weak var released: Capture?
    do {
      let capture = Capture()
      released = capture
      source.addObserver(labels[3]) { _, _ in withExtendedLifetime(capture) { calls.append(3) } }
    }
    #expect(released != nil)
    // Replaced again, several times: each replacement lets go of the closure it replaces.
    for _ in 0..<5 {
      source.addObserver(labels[3]) { _, _ in calls.append(3) }
      #expect(released == nil)
    }
    source.value = 1
    #expect(calls == [0, 1, 2, 4, 5, 6, 7, 8, 9, 3])
    #expect(source.observerCount == 10)
    source.removeObserver(labels[3])
    calls = []
    source.value = 2
    #expect(calls == [0, 1, 2, 4, 5, 6, 7, 8, 9])
    // An optimised build may end an array's lifetime after its last use: keep the owners alive.
    withExtendedLifetime(labels) {}
  }

  @MainActor @Test func addObserverWithoutRemoveIfExistsKeepsTheEarlierRegistration() {
    let source = Observable(0)
    let label = Label()
    var calls: [String] = []
    source.addObserver(label) { value, _ in calls.append("first \(value)") }
    source.addObserver(label, removeIfExists: false) { value, _ in calls.append("second \(value)") }
    source.value = 1
    #expect(calls == ["first 1", "second 1"])
  }

  @MainActor @Test func addObserverLeavesTheOwnersKeyPathBinding() {
    let source = Observable("a")
    let label = Label()
    source.bind(to: label, \.text)
    var calls: [String] = []
    source.addObserver(label) { value, _ in calls.append(value) }
    source.value = "b"
    #expect(label.text == "b")
    #expect(calls == ["b"])
  }

  @MainActor @Test func addObserverLeavesTheOwnersObserveWithRegistration() {
    let source = Observable(0)
    let label = Label()
    var calls: [String] = []
    source.observe(with: label) { _, value in calls.append("with \(value)") }
    source.addObserver(label) { value, _ in calls.append("added \(value)") }
    source.value = 1
    #expect(calls == ["with 1", "added 1"])
  }

  @MainActor @Test func removeObserverEndsEveryRegistrationOfTheOwner() {
    let source = Observable("a")
    let label = Label()
    var calls: [String] = []
    source.bind(to: label, \.text)
    source.observe(with: label) { _, value in calls.append("with \(value)") }
    source.addObserver(label) { value, _ in calls.append("added \(value)") }
    source.removeObserver(label)
    source.value = "b"
    #expect(label.text == "a")
    #expect(calls.isEmpty)
    #expect(source.observerCount == 0)
  }

  @MainActor @Test func removeObserverLeavesTokensAndOtherOwners() {
    let source = Observable(0)
    let label = Label()
    let other = Label()
    var calls: [String] = []
    let token = source.observe { value, _ in calls.append("token \(value)") }
    source.addObserver(other) { value, _ in calls.append("other \(value)") }
    source.addObserver(label) { value, _ in calls.append("label \(value)") }
    source.removeObserver(label)
    source.value = 1
    #expect(calls == ["token 1", "other 1"])
    withExtendedLifetime(token) {}
  }
}
