import PropertyObservation
import PropertyObservationTesting
import Testing

@Suite("BatchUpdateValidator")
struct BatchUpdateValidatorTests {
  private func problems(_ batch: BatchUpdate<String>, from old: [String]) -> [String] {
    BatchUpdateValidator<String>.problems(in: batch, appliedTo: old)
  }

  @Test func aConsistentBatchHasNoProblems() {
    let batch = BatchUpdate(
      deletions: [1], insertions: [0], moves: [.init(old: 2, new: 2)],
      elements: ["X", "A", "C"], oldCount: 3)
    #expect(problems(batch, from: ["A", "B", "C"]) == [])
  }

  @Test func offsetsOutOfRangeOrRepeatedAreReported() {
    let batch = BatchUpdate(
      reloads: [3], deletions: [0, 0], elements: ["A", "B"], oldCount: 3)
    #expect(
      problems(batch, from: ["A", "B", "C"]) == [
        "reload 3 is out of range 0..<3", "deletion 0 appears twice",
        "3 rows - 2 deleted + 0 inserted is not the 2 rows after the batch",
      ])
  }

  @Test func aRowCannotBeReloadedAndMovedOrDeletedAndMoved() {
    let batch = BatchUpdate(
      reloads: [0], deletions: [1], moves: [.init(old: 0, new: 1), .init(old: 1, new: 0)],
      elements: ["A", "B"], oldCount: 2)
    #expect(
      problems(batch, from: ["A", "B"]).contains("row 0 is reloaded and moved")
        && problems(batch, from: ["A", "B"]).contains("row 1 is deleted and moved"))
  }

  @Test func countsThatDoNotAddUpAreReported() {
    let batch = BatchUpdate(insertions: [0], elements: ["X", "A"], oldCount: 2)
    #expect(
      problems(batch, from: ["A", "B"]) == [
        "2 rows - 0 deleted + 1 inserted is not the 2 rows after the batch"
      ])
  }

  @Test func dataThatDoesNotMatchTheReplayedBatchIsReported() {
    // A move counted before the deletion: UIKit would show B where the data source has C.
    let batch = BatchUpdate(
      deletions: [0], moves: [.init(old: 1, new: 0)], elements: ["C", "B"], oldCount: 3)
    #expect(
      problems(batch, from: ["A", "B", "C"]) == [
        "row 0 shows B after the batch; the data source has C",
        "row 1 shows C after the batch; the data source has B",
      ])
  }

  @MainActor
  @Test func theFakeViewLogsReloadsAndBatchesAndKeepsTheRows() {
    let table = BatchUpdateValidator<String>()
    table.reloadAll(["A", "B"])
    table.performBatch(BatchUpdate(deletions: [0], elements: ["B"], oldCount: 2))
    table.performBatch(BatchUpdate(insertions: [5], elements: ["B", "C"], oldCount: 1))
    #expect(table.log == ["reloadAll(2)", "batch(-[0])", "batch(+[5])"])
    #expect(table.rows == ["B", "C"])
    #expect(table.problems == ["insertion 5 is out of range 0..<2"])
  }
}
