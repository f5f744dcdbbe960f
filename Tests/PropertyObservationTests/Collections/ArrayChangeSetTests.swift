import PropertyObservation
import PropertyObservationTesting
import Testing

@Suite("ArrayChangeSet")
struct ArrayChangeSetTests {
  private func diff(_ old: String, _ new: String) -> ArrayChangeSet<Character> {
    .difference(from: Array(old), to: Array(new), id: { $0 }, isUpdated: { _, _ in false })
  }

  @Test func rotatingFourElementsIsOneMove() {
    let changes = diff("ABCD", "BCDA")
    #expect(changes.moves == [.init(old: 0, new: 3)])
    #expect(changes.removals.isEmpty && changes.insertions.isEmpty && changes.updates.isEmpty)
  }

  @Test func movesAreTheElementsOutsideOneLongestRunThatKeptItsOrder() {
    // D and A swap ends around B C E: B C E stays, so two moves, not four.
    let changes = diff("ABCDE", "DBCEA")
    #expect(changes.moves.count == 2)
    #expect(Set(changes.moves.map(\.old)) == [0, 3])
  }

  @Test func removalsAreAtOldOffsetsAndInsertionsAtNewOffsets() {
    let changes = diff("ABCD", "XBDY")
    #expect(changes.removals == [0, 2])
    #expect(changes.insertions == [0, 3])
    #expect(changes.moves.isEmpty)
    #expect(changes.oldCount == 4)
  }

  @Test func theKthOccurrenceOfADuplicatedIdMatchesTheKthOccurrence() {
    let changes = diff("AAB", "BAAA")
    // Both old A's match the first two new A's; the third new A is inserted.
    #expect(changes.insertions == [3])
    #expect(changes.removals.isEmpty)
    #expect(Array(changes.applying(to: Array("AAB"))) == Array("BAAA"))
  }

  @Test func matchedElementsThatChangedAreUpdatesAtBothOffsets() {
    struct Item: Equatable {
      var id: Int
      var title: String
    }
    let old = [Item(id: 1, title: "a"), Item(id: 2, title: "b"), Item(id: 3, title: "c")]
    let new = [Item(id: 3, title: "C"), Item(id: 1, title: "a"), Item(id: 2, title: "b")]
    let changes = ArrayChangeSet<Item>.difference(
      from: old, to: new, id: { $0.id }, isUpdated: { $0 != $1 })
    #expect(changes.updates == [.init(old: 2, new: 0)])
    #expect(changes.moves == [.init(old: 2, new: 0)])
    #expect(changes.applying(to: old) == new)
  }

  @Test func applyingTakesUnchangedElementsFromTheOldCollection() {
    // The ids match, no update is reported: applying keeps the old values, so a replica sees
    // exactly what the change set says.
    let changes = ArrayChangeSet<(Int, String)>.difference(
      from: [(1, "old")], to: [(1, "new")], id: \.0, isUpdated: { _, _ in false })
    #expect(changes.isEmpty)
    #expect(changes.applying(to: [(1, "old")]).map(\.1) == ["old"])
  }

  @Test func theCollectionDifferenceRebuildsTheNewArray() {
    let old = Array("ABCDEFG")
    let new = Array("GBXDAFE")
    let changes = diff(String(old), String(new))
    #expect(old.applying(changes.difference(from: old)) == new)
    #expect(changes.applying(to: old) == new)
  }

  @Test func batchUpdatesReloadThenDeleteThenInsertAndMoveAtFinalOffsets() {
    struct Row: Equatable {
      var id: Character
      var version = 0
    }
    let old = "ABCDE".map { Row(id: $0) }
    var new = "EXBDA".map { Row(id: $0) }
    new[2].version = 1  // B updated
    let changes = ArrayChangeSet<Row>.difference(
      from: old, to: new, id: { $0.id }, isUpdated: { $0 != $1 })
    let stages = changes.batchUpdates(from: old)
    #expect(stages.count == 3)
    #expect(stages[0].reloads == [1])
    #expect(stages[1].deletions == [2])
    #expect(stages[2].insertions == [1])
    var rows = old
    for stage in stages {
      #expect(BatchUpdateValidator<Row>.problems(in: stage, appliedTo: rows) == [])
      rows = stage.elements
    }
    #expect(rows == new)
  }

  @Test func anEmptyChangeHasNoBatches() {
    #expect(diff("AB", "AB").batchUpdates(from: Array("AB")).isEmpty)
    #expect(diff("AB", "AB").isEmpty)
  }

  @Test func aChangeSetPrintsItsParts() {
    #expect(diff("ABC", "CAX").description == "-[1] +[2] ↷[2→0]")
  }
}
