import PropertyObservation
import Testing

/// An object whose only holder is a registration's closure: its release shows when the closure
/// was let go.
private final class Capture {}

/// The tokens of a test, which a callback of the test cancels.
@MainActor private final class TokenList {
  var all: [ObservationToken] = []
}

/// An owner of `addObserver` registrations.
private final class ListOwner {}

/// Entries removed while a round runs are only marked; the list drops them afterwards, releasing
/// the closures they still hold, while entries whose closure was already taken (a replaced
/// owner's) are dropped without a second release. The survivors keep their order.
@Suite("Compacting the list after removals")
struct CompactionTests {
  @MainActor @Test func closuresRemovedDuringARoundAreReleasedWhenItEndsAndSurvivorsKeepTheirOrder()
  {
    let source = Observable(0)
    var calls: [Int] = []
    let tokens = TokenList()
    var released: [Int: () -> Bool] = [:]
    tokens.all.append(
      source.observe { value, _ in
        guard value == 1 else { return }
        // Inside the round: the odd registrations are marked, not compacted yet.
        for index in stride(from: 1, to: 20, by: 2) { tokens.all[index].cancel() }
      })
    for index in 1..<20 {
      let capture = Capture()
      weak let weakCapture = capture
      released[index] = { weakCapture == nil }
      tokens.all.append(
        source.observe { _, _ in withExtendedLifetime(capture) { calls.append(index) } })
    }
    source.value = 1
    // The first callback cancelled the odd ones before the round reached them.
    #expect(calls == Array(stride(from: 2, to: 20, by: 2)))
    for index in 1..<20 {
      #expect(released[index]!() == !index.isMultiple(of: 2), "registration \(index)")
    }
    calls = []
    source.value = 2
    #expect(calls == Array(stride(from: 2, to: 20, by: 2)))
    #expect(source.observerCount == 10)
    withExtendedLifetime(tokens.all) {}
  }

  @MainActor @Test func aCompactionDropsReplacedEntriesBesideMarkedOnesAndReleasesEachClosureOnce()
  {
    let source = Observable(0)
    let owners = (0..<8).map { _ in ListOwner() }
    var calls: [String] = []
    var firstCaptures: [() -> Bool] = []
    for (number, owner) in owners.enumerated() {
      let capture = Capture()
      weak let weakCapture = capture
      firstCaptures.append { weakCapture == nil }
      source.addObserver(owner) { _, _ in
        withExtendedLifetime(capture) { calls.append("\(number)") }
      }
    }
    // A removal by owner builds the index; replacements then take each closure out at once.
    source.removeObserver(owners[7])
    for number in [1, 3, 5] {
      source.addObserver(owners[number]) { _, _ in calls.append("\(number)'") }
    }
    for number in [1, 3, 5, 7] { #expect(firstCaptures[number](), "owner \(number)") }
    // Removed inside a round: marked beside the replaced entries, then compacted with them.
    let remover = ListOwner()
    source.addObserver(remover) { value, _ in
      if value == 1 { source.removeObserver(owners[2]) }
    }
    source.value = 1
    #expect(calls == ["0", "2", "4", "6", "1'", "3'", "5'"])
    #expect(firstCaptures[2]())
    for number in [0, 4, 6] { #expect(!firstCaptures[number](), "owner \(number)") }
    calls = []
    source.value = 2
    #expect(calls == ["0", "4", "6", "1'", "3'", "5'"])
    #expect(source.observerCount == 7)
    withExtendedLifetime((owners, remover)) {}
  }
}
