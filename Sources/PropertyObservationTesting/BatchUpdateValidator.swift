public import PropertyObservation

/// A fake table view: a ``/PropertyObservation/BatchUpdateTarget`` that checks every batch the
/// way UIKit does, and records what it was asked to do.
///
/// Bind an array to it in a test, make changes, and expect no problems and rows equal to the
/// array:
///
/// ```swift
/// @MainActor func checkTodos() {
///   let todos = ObservableArray(["Milk", "Eggs"])
///   let table = BatchUpdateValidator<String>()
///   todos.bind(to: table)
///   todos.move(from: 1, to: 0)
///   todos.remove(at: 1)
///   assert(table.problems.isEmpty && table.rows == Array(todos.elements))
/// }
/// ```
///
/// A batch passes when, like `performBatchUpdates` requires: reloads, deletions and move sources
/// are unique offsets of the rows before the batch; no row is both reloaded and moved or deleted,
/// nor moved and deleted; insertions and move targets are unique offsets of the rows after it;
/// the counts agree (rows before − deletions + insertions = rows after); and replaying the batch
/// on the rows before it (survivors in order, moved rows at their targets, inserted and reloaded
/// rows taken from the data source) gives exactly the batch's elements.
@MainActor
public final class BatchUpdateValidator<Element: Equatable>: BatchUpdateTarget {
  /// The rows the fake view shows: the data source after the last reload or batch.
  public private(set) var rows: [Element] = []
  /// What the view was asked to do, in order: `reloadAll(3)`, `batch(-[1] +[0])`, ….
  public private(set) var log: [String] = []
  /// Every problem found so far, in order; empty when every batch was valid.
  public private(set) var problems: [String] = []

  /// Creates a fake view with no rows.
  public init() {}

  /// Replaces every row.
  ///
  /// - Parameter elements: The new rows.
  public func reloadAll(_ elements: [Element]) {
    rows = elements
    log.append("reloadAll(\(elements.count))")
  }

  /// Checks `batch` against the rows shown, records any problem, then shows its elements.
  ///
  /// - Parameter batch: The batch to apply.
  public func performBatch(_ batch: BatchUpdate<Element>) {
    problems += Self.problems(in: batch, appliedTo: rows)
    rows = batch.elements
    log.append("batch(\(Self.summary(of: batch)))")
  }

  /// The problems UIKit would find in `batch` applied to `old`: none when it is valid.
  ///
  /// - Parameters:
  ///   - batch: The batch to check.
  ///   - old: The rows before the batch.
  /// - Returns: One message per problem, in a fixed order.
  public nonisolated static func problems(
    in batch: BatchUpdate<Element>, appliedTo old: [Element]
  ) -> [String] {
    var problems: [String] = []
    let new = batch.elements
    if batch.oldCount != old.count {
      problems.append("the batch expects \(batch.oldCount) rows before it; there were \(old.count)")
    }
    func check(_ offsets: [Int], _ what: String, count: Int) -> Set<Int> {
      var seen = Set<Int>()
      for offset in offsets {
        if !(0..<count).contains(offset) {
          problems.append("\(what) \(offset) is out of range 0..<\(count)")
        }
        if !seen.insert(offset).inserted { problems.append("\(what) \(offset) appears twice") }
      }
      return seen
    }
    let reloads = check(batch.reloads, "reload", count: old.count)
    let deletions = check(batch.deletions, "deletion", count: old.count)
    let sources = check(batch.moves.map(\.old), "move source", count: old.count)
    let insertions = check(batch.insertions, "insertion", count: new.count)
    let targets = check(batch.moves.map(\.new), "move target", count: new.count)
    for offset in reloads.intersection(deletions).sorted() {
      problems.append("row \(offset) is reloaded and deleted")
    }
    for offset in reloads.intersection(sources).sorted() {
      problems.append("row \(offset) is reloaded and moved")
    }
    for offset in deletions.intersection(sources).sorted() {
      problems.append("row \(offset) is deleted and moved")
    }
    for offset in insertions.intersection(targets).sorted() {
      problems.append("row \(offset) is inserted and a move target")
    }
    if old.count - batch.deletions.count + batch.insertions.count != new.count {
      problems.append(
        "\(old.count) rows - \(batch.deletions.count) deleted + \(batch.insertions.count) inserted"
          + " is not the \(new.count) rows after the batch")
    }
    guard problems.isEmpty else { return problems }
    // Replay: moved rows at their targets, inserted rows from the data, survivors in order in
    // the remaining slots; compare every row that is neither inserted nor reloaded.
    var replayed = [Int?](repeating: nil, count: new.count)  // old offset shown at each row
    var isTaken = [Bool](repeating: false, count: new.count)
    for offset in insertions { isTaken[offset] = true }
    for move in batch.moves {
      replayed[move.new] = move.old
      isTaken[move.new] = true
    }
    var slot = 0
    for offset in old.indices where !deletions.contains(offset) && !sources.contains(offset) {
      while isTaken[slot] { slot += 1 }
      replayed[slot] = offset
      slot += 1
    }
    for (row, origin) in replayed.enumerated() {
      guard let origin, !reloads.contains(origin), old[origin] != new[row] else { continue }
      problems.append(
        "row \(row) shows \(old[origin]) after the batch; the data source has \(new[row])")
    }
    return problems
  }

  nonisolated static func summary(of batch: BatchUpdate<Element>) -> String {
    var parts: [String] = []
    if !batch.reloads.isEmpty { parts.append("~\(batch.reloads)") }
    if !batch.deletions.isEmpty { parts.append("-\(batch.deletions)") }
    if !batch.insertions.isEmpty { parts.append("+\(batch.insertions)") }
    if !batch.moves.isEmpty { parts.append("↷\(batch.moves)") }
    return parts.joined(separator: " ")
  }
}
