import PropertyObservation
import TestSupport
import Testing

@Suite("ReadOnlyObservableArray.sorted(by:)")
struct SortedArrayTests {
  private struct Entry: Equatable, CustomStringConvertible {
    var name: String
    var rank: Int
    var description: String { "\(name)\(rank)" }
  }

  @Test func insertionsAndRemovalsArePlacedByTheOrder() {
    let source = ObservableArray([5, 1, 3])
    let sorted = source.sorted(by: <)
    let log = ChangeLog(sorted)
    source.append(2)  // between 1 and 3
    source.insert(9, at: 0)  // at the end
    source.remove(at: 1)  // the 5
    source.append(contentsOf: [0, 4])
    #expect(log.descriptions == ["reset +[0, 1, 2]", "+[1]", "+[4]", "-[3]", "+[0, 4]"])
    #expect(Array(sorted.elements) == [0, 1, 2, 3, 4, 9])
    #expect(log.replica == [0, 1, 2, 3, 4, 9])
  }

  @Test func anElementWhoseKeyChangesMovesAndOneThatStillFitsIsUpdatedInPlace() {
    let source = ObservableArray([
      Entry(name: "a", rank: 1), Entry(name: "b", rank: 2), Entry(name: "c", rank: 3),
    ])
    let sorted = source.sorted { $0.rank < $1.rank }
    let log = ChangeLog(sorted)
    source[0].rank = 5  // a moves to the end
    source[1].name = "B"  // B keeps its place
    source[2].rank = 4  // c still fits between B and a
    source.refresh(at: 0)
    #expect(
      log.descriptions == ["reset +[0, 1, 2]", "↷[0→2] ~[0→2]", "~[0→0]", "~[1→1]", "~[2→2]"])
    #expect(sorted.elements.map(\.description) == ["B2", "c4", "a5"])
    #expect(log.replica == Array(sorted.elements))
  }

  @Test func aMoveInTheSourceDeliversNothing() {
    let source = ObservableArray([3, 1, 2])
    let sorted = source.sorted(by: <)
    let log = ChangeLog(sorted)
    source.move(from: 0, to: 2)
    source.edit { $0.move(from: 0, to: 1) }
    #expect(log.descriptions == ["reset +[0, 1, 2]"])
  }

  @Test func aResetResortsEverythingStably() {
    let source = ObservableArray([Entry(name: "x", rank: 1)])
    let sorted = source.sorted { $0.rank < $1.rank }
    let log = ChangeLog(sorted)
    source.reset(to: [
      Entry(name: "b", rank: 2), Entry(name: "a", rank: 1), Entry(name: "c", rank: 1),
    ])
    #expect(log.descriptions == ["reset +[0]", "reset -[0] +[0, 1, 2]"])
    #expect(sorted.elements.map(\.description) == ["a1", "c1", "b2"])
  }

  @Test func anEnteringElementGoesAfterTheElementsEqualToIt() {
    let source = ObservableArray([Entry(name: "a", rank: 1), Entry(name: "b", rank: 2)])
    let sorted = source.sorted { $0.rank < $1.rank }
    let log = ChangeLog(sorted)
    source.insert(Entry(name: "z", rank: 1), at: 0)
    source[2].rank = 1  // b now equals a and z, and still fits after them: it stays
    #expect(log.descriptions == ["reset +[0, 1]", "+[1]", "~[2→2]"])
    #expect(sorted.elements.map(\.description) == ["a1", "z1", "b1"])
  }

  @Test func updatedNeighboursThatSwapTheirOrderAreNotBothKept() {
    let source = ObservableArray([1, 3, 5, 10])
    let sorted = source.sorted(by: <)
    let log = ChangeLog(sorted)
    source.edit { editor in
      editor[1] = 8  // 3 → 8 still fits between 1 and 10 …
      editor[2] = 4  // … and so does 5 → 4, but not after 8
    }
    #expect(log.descriptions == ["reset +[0, 1, 2, 3]", "↷[2→1] ~[2→1, 1→2]"])
    #expect(Array(sorted.elements) == [1, 4, 8, 10])
    #expect(log.replica == [1, 4, 8, 10])
  }

  @Test func theComparatorRunsOnlyForEnteringElementsAfterTheFirstSort() {
    let source = ObservableArray(Array(0..<1_000))
    let comparisons = RecordingLog<Int>()
    let sorted = source.sorted { left, right in
      comparisons.append(0)
      return left < right
    }
    let before = comparisons.events.count
    source.append(500)
    // A binary search over 1 000 elements: about log2(1 000) comparisons, not 1 000.
    #expect(comparisons.events.count - before <= 12)
    #expect(Array(sorted.elements) == (Array(0...500) + Array(500..<1_000)))
  }
}
