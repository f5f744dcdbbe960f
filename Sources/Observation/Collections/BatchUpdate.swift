/// One batch of row changes that a table or collection view can animate, with the data its data
/// source must hold once the batch is applied.
///
/// ``ArrayChangeSet/batchUpdates(from:)`` splits a change set into such batches (stages), each
/// of which UIKit accepts: within a batch, ``reloads``, ``deletions`` and the sources of
/// ``moves`` are offsets in the data before the batch; ``insertions`` and the targets of
/// ``moves`` are offsets in ``elements``, the data after it. Set the data source to
/// ``elements`` inside the batch:
///
/// ```swift
/// func perform(_ batch: BatchUpdate<String>) {
///   tableView.performBatchUpdates {
///     rows = batch.elements
///     tableView.reloadRows(at: batch.reloads.map { IndexPath(row: $0, section: 0) }, with: .none)
///     // deleteRows, insertRows and moveRow likewise
///   }
/// }
/// ```
public struct BatchUpdate<Element> {
  /// The rows to reload, at offsets before the batch.
  public let reloads: [Int]
  /// The rows to delete, at offsets before the batch; ascending.
  public let deletions: [Int]
  /// The rows to insert, at offsets in ``elements``; ascending.
  public let insertions: [Int]
  /// The rows to move: from an offset before the batch to one in ``elements``.
  public let moves: [ArrayChangeSet<Element>.Match]
  /// The data the data source holds after the batch (set it inside the batch).
  public let elements: [Element]
  /// The number of rows before the batch.
  public let oldCount: Int

  /// Creates a batch.
  ///
  /// - Parameters:
  ///   - reloads: Rows to reload, at old offsets.
  ///   - deletions: Rows to delete, at old offsets.
  ///   - insertions: Rows to insert, at new offsets.
  ///   - moves: Rows to move, old offset to new offset.
  ///   - elements: The data after the batch.
  ///   - oldCount: The number of rows before the batch.
  public init(
    reloads: [Int] = [], deletions: [Int] = [], insertions: [Int] = [],
    moves: [ArrayChangeSet<Element>.Match] = [], elements: [Element], oldCount: Int
  ) {
    self.reloads = reloads
    self.deletions = deletions
    self.insertions = insertions
    self.moves = moves
    self.elements = elements
    self.oldCount = oldCount
  }
}

// Every stored property is a value; `elements` is Sendable when `Element` is.
extension BatchUpdate: Sendable where Element: Sendable {}

extension ArrayChangeSet {
  /// This change as the batches a table view can apply one after the other: first the reloads
  /// (at old offsets), then the deletions (at old offsets), then the insertions and moves (at
  /// final offsets, a move's source counted after the deletions). Empty batches are left out.
  ///
  /// UIKit refuses a batch that reloads a row it also moves, and counts a move's source before
  /// the batch's deletions; the stages keep every batch within those rules. Each batch carries
  /// the data the data source must hold once it is applied.
  ///
  /// - Parameter old: The elements before the change (what the data source holds now); its
  ///   count must be ``oldCount``.
  /// - Returns: The batches, in the order to apply them; none when the change is empty.
  /// - Complexity: O(*n*), in block copies: one per batch.
  public func batchUpdates(from old: some Collection<Element>) -> [BatchUpdate<Element>] {
    require(old.count == oldCount, "applying a change set to a collection of the wrong count")
    return batchUpdates(fromArray: Array(old))
  }

  /// ``batchUpdates(from:)`` from an array, which it copies only for a batch that needs the
  /// data between the old elements and ``elements``.
  func batchUpdates(fromArray old: [Element]) -> [BatchUpdate<Element>] {
    require(old.count == oldCount, "applying a change set to a collection of the wrong count")
    var stages: [BatchUpdate<Element>] = []
    var current = old
    if !updates.isEmpty {
      for update in updates { current[update.old] = elements[update.new] }
      stages.append(
        BatchUpdate(
          reloads: updates.map(\.old).sorted(), elements: current, oldCount: current.count))
    }
    if !removals.isEmpty {
      let countBefore = current.count
      current = Self.keeping(current, removing: removals)
      stages.append(BatchUpdate(deletions: removals, elements: current, oldCount: countBefore))
    }
    if !insertions.isEmpty || !moves.isEmpty {
      // A move's source counts after the deletions: less the removals before it.
      let moves = moves.map { Match(old: $0.old - removals.countLess(than: $0.old), new: $0.new) }
      stages.append(
        BatchUpdate(
          insertions: insertions, moves: moves, elements: Array(elements), oldCount: current.count))
    }
    return stages
  }

  /// `elements` without the ones at `removals` (ascending), copied run by run in block copies.
  private static func keeping(_ elements: [Element], removing removals: [Int]) -> [Element] {
    var kept: [Element] = []
    kept.reserveCapacity(elements.count - removals.count)
    var start = 0
    for removed in removals {
      if start < removed { kept.append(contentsOf: elements[start..<removed]) }
      start = removed + 1
    }
    if start < elements.count { kept.append(contentsOf: elements[start...]) }
    return kept
  }
}
