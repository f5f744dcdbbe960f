public import PropertyObservation

/// A fake table view for testing your own table adapter: it takes the calls a `UITableView`
/// takes (`reloadData`, `performBatchUpdates`, `reloadRows`, `deleteRows`, `insertRows`,
/// `moveRow`), rebuilds each batch from them, checks it against the rows it showed and what
/// the data source holds afterwards, the way UIKit checks it, and records every problem.
///
/// Write the adapter against the few calls it makes (a protocol of your app that `UITableView`
/// adopts), and give it this fake in tests; see <doc:TestingYourTableAdapter>:
///
/// ```swift
/// @MainActor func checkAdapter() {
///   let table = RecordingTableView<String>()
///   var rows = ["Milk", "Eggs"]
///   table.dataSource = { rows }
///   table.reloadData()
///   table.performBatchUpdates {
///     rows = ["Eggs", "Tea"]
///     table.deleteRows(at: [0])
///     table.insertRows(at: [1])
///   }
///   assert(table.problems.isEmpty && table.log == ["reloadData(2)", "batch(-[0] +[1])"])
/// }
/// ```
///
/// A call made outside `performBatchUpdates` is a batch of its own, as in UIKit. The checks are
/// those of ``BatchUpdateValidator``: unique offsets in range, no row both reloaded and moved
/// or deleted, counts that add up (rows before − deletions + insertions = rows the data source
/// has after), and rows that show what the data source holds.
///
/// It is also a ``/PropertyObservation/BatchUpdateTarget`` itself, so an array can be bound to
/// it directly: it then plays the adapter of the collections article, holding the rows as its
/// own data source and making the same calls.
@MainActor
public final class RecordingTableView<Row: Equatable>: BatchUpdateTarget {
  /// The rows the view shows: what the data source held after the last reload or batch.
  public private(set) var rows: [Row] = []
  /// What the view was asked to do, in order: `reloadData(3)`, `batch(~[1] -[0] +[2])`, ….
  public private(set) var log: [String] = []
  /// Every problem found so far, in order; empty when every batch was valid.
  public private(set) var problems: [String] = []
  /// The rows the data source holds: the view reads it after each reload and batch, as a table
  /// view asks its data source for its rows. Until it is set, the view reads no rows and records
  /// a problem.
  public var dataSource: (() -> [Row])?

  /// The calls of the batch being recorded, or `nil` outside `performBatchUpdates`.
  private var pending: PendingBatch?
  /// The rows held when the view is bound directly, as its own data source.
  private var ownRows: [Row] = []

  private struct PendingBatch {
    var reloads: [Int] = []
    var deletions: [Int] = []
    var insertions: [Int] = []
    var moves: [ArrayChangeSet<Row>.Match] = []
  }

  /// Creates a view with no rows and no data source.
  public init() {}

  /// Shows what the data source holds, without checking anything: `reloadData()`.
  public func reloadData() {
    rows = readDataSource()
    log.append("reloadData(\(rows.count))")
  }

  /// Records the calls `updates` makes as one batch, then checks it: `performBatchUpdates(_:)`.
  ///
  /// Set the data source's rows inside `updates`, as UIKit requires; the view reads them once
  /// `updates` returns.
  ///
  /// - Parameter updates: Changes the data source and calls the row methods.
  public func performBatchUpdates(_ updates: () -> Void) {
    guard pending == nil else {
      problems.append("performBatchUpdates was called inside another batch")
      return updates()
    }
    pending = PendingBatch()
    updates()
    finishBatch()
  }

  /// Reloads the rows at `rows`, offsets before the batch.
  ///
  /// - Parameter rows: Row offsets.
  public func reloadRows(at rows: [Int]) {
    record { $0.reloads += rows }
  }

  /// Deletes the rows at `rows`, offsets before the batch.
  ///
  /// - Parameter rows: Row offsets.
  public func deleteRows(at rows: [Int]) {
    record { $0.deletions += rows }
  }

  /// Inserts rows at `rows`, offsets after the batch.
  ///
  /// - Parameter rows: Row offsets.
  public func insertRows(at rows: [Int]) {
    record { $0.insertions += rows }
  }

  /// Moves the row at `source` (before the batch) to `destination` (after it).
  ///
  /// - Parameters:
  ///   - source: The row's offset before the batch.
  ///   - destination: Its offset after the batch.
  public func moveRow(at source: Int, to destination: Int) {
    record { $0.moves.append(.init(old: source, new: destination)) }
  }

  // MARK: - BatchUpdateTarget

  /// Bound directly: holds `elements` as its own data source, and reloads.
  ///
  /// - Parameter elements: The rows from now on.
  public func reloadAll(_ elements: [Row]) {
    useOwnRows()
    ownRows = elements
    reloadData()
  }

  /// Bound directly: applies `batch` as the collections article's adapter does, holding its
  /// elements as its own data source.
  ///
  /// - Parameter batch: The batch to apply.
  public func performBatch(_ batch: BatchUpdate<Row>) {
    useOwnRows()
    performBatchUpdates {
      ownRows = batch.elements
      reloadRows(at: batch.reloads)
      deleteRows(at: batch.deletions)
      insertRows(at: batch.insertions)
      for move in batch.moves { moveRow(at: move.old, to: move.new) }
    }
  }

  // MARK: - Recording

  private func useOwnRows() {
    guard dataSource == nil else { return }
    dataSource = { [unowned self] in ownRows }
  }

  private func record(_ call: (inout PendingBatch) -> Void) {
    guard pending != nil else {
      // Outside performBatchUpdates, UIKit applies the call as a batch of its own.
      pending = PendingBatch()
      call(&pending!)
      return finishBatch()
    }
    call(&pending!)
  }

  private func finishBatch() {
    guard let calls = pending else { return }
    pending = nil
    let batch = BatchUpdate(
      reloads: calls.reloads, deletions: calls.deletions.sorted(),
      insertions: calls.insertions.sorted(), moves: calls.moves, elements: readDataSource(),
      oldCount: rows.count)
    problems += BatchUpdateValidator<Row>.problems(in: batch, appliedTo: rows)
    rows = batch.elements
    log.append("batch(\(BatchUpdateValidator<Row>.summary(of: batch)))")
  }

  private func readDataSource() -> [Row] {
    guard let dataSource else {
      problems.append("the view has no data source")
      return []
    }
    return dataSource()
  }
}
