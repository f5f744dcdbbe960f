import PropertyObservation
import PropertyObservationTesting
import Testing

/// The calls a table adapter makes, as an app would declare them for `UITableView` to adopt.
@MainActor
private protocol RowTable: AnyObject {
  func reloadData()
  func performBatchUpdates(_ updates: () -> Void)
  func reloadRows(at rows: [Int])
  func deleteRows(at rows: [Int])
  func insertRows(at rows: [Int])
  func moveRow(at source: Int, to destination: Int)
}

extension RecordingTableView: RowTable {}

/// An adapter under test; `setsRowsAfterTheBatch` reproduces a common mistake.
@MainActor
private final class Adapter<Table: RowTable>: BatchUpdateTarget {
  private(set) var rows: [String] = []
  let table: Table
  let setsRowsAfterTheBatch: Bool

  init(table: Table, setsRowsAfterTheBatch: Bool = false) {
    self.table = table
    self.setsRowsAfterTheBatch = setsRowsAfterTheBatch
  }

  func reloadAll(_ elements: [String]) {
    rows = elements
    table.reloadData()
  }

  func performBatch(_ batch: BatchUpdate<String>) {
    table.performBatchUpdates {
      if !setsRowsAfterTheBatch { rows = batch.elements }
      table.reloadRows(at: batch.reloads)
      table.deleteRows(at: batch.deletions)
      table.insertRows(at: batch.insertions)
      for move in batch.moves { table.moveRow(at: move.old, to: move.new) }
    }
    if setsRowsAfterTheBatch { rows = batch.elements }
  }
}

@MainActor
@Suite("RecordingTableView")
struct RecordingTableViewTests {
  @Test func anAdapterThatFollowsUIKitsRulesPassesEveryBatch() {
    let list = ObservableArray(["A", "B", "C", "D"])
    let table = RecordingTableView<String>()
    let adapter = Adapter(table: table)
    table.dataSource = { [unowned adapter] in adapter.rows }
    list.bind(to: adapter)
    list.replace(with: ["D", "b", "A", "E"], id: { $0.lowercased() }, isUpdated: { $0 != $1 })
    list.remove(at: 0)
    #expect(
      table.log == [
        "reloadData(4)", "batch(~[1])", "batch(-[2])", "batch(+[3] ↷[2→0, 1→1])", "batch(-[0])",
      ])
    #expect(table.problems == [])
    #expect(table.rows == ["b", "A", "E"])
  }

  /// The worked example of the "Testing your own table adapter" article.
  @Test func theArticlesAdapterMakesOnlyBatchesUIKitAccepts() {
    let list = ObservableArray(["Milk", "Eggs", "Bread"])
    let table = RecordingTableView<String>()
    let adapter = Adapter(table: table)
    table.dataSource = { [unowned adapter] in adapter.rows }
    list.bind(to: adapter)
    list.append("Tea")
    list.move(from: 3, to: 0)
    list.remove(at: 2)
    #expect(table.problems == [])
    #expect(table.log == ["reloadData(3)", "batch(+[3])", "batch(↷[3→0])", "batch(-[2])"])
    #expect(table.rows == Array(list.elements))
  }

  @Test func anAdapterThatSetsItsRowsAfterTheBatchIsReported() {
    let list = ObservableArray(["A", "B"])
    let table = RecordingTableView<String>()
    let adapter = Adapter(table: table, setsRowsAfterTheBatch: true)
    table.dataSource = { [unowned adapter] in adapter.rows }
    list.bind(to: adapter)
    list.append("C")
    #expect(table.log == ["reloadData(2)", "batch(+[2])"])
    #expect(
      table.problems == [
        "insertion 2 is out of range 0..<2",
        "2 rows - 0 deleted + 1 inserted is not the 2 rows after the batch",
      ])
  }

  @Test func callsOutsideABatchAreBatchesOfTheirOwn() {
    let table = RecordingTableView<Int>()
    var rows = [1, 2, 3]
    table.dataSource = { rows }
    table.reloadData()
    rows = [2, 3]
    table.deleteRows(at: [0])
    rows = [3, 2]
    table.moveRow(at: 1, to: 0)
    rows = [3, 2, 4]
    table.insertRows(at: [1])  // wrong: 4 is at 2
    #expect(
      table.log == ["reloadData(3)", "batch(-[0])", "batch(↷[1→0])", "batch(+[1])"])
    #expect(
      table.problems == [
        "row 2 shows 2 after the batch; the data source has 4"
      ])
  }

  @Test func boundDirectlyItIsItsOwnAdapter() {
    let list = ObservableArray(["A", "B", "C"])
    let table = RecordingTableView<String>()
    list.bind(to: table)
    list.move(from: 0, to: 2)
    list[0] = "b"
    list.reset(to: ["Z"])
    #expect(table.log == ["reloadData(3)", "batch(↷[0→2])", "batch(~[0])", "reloadData(1)"])
    #expect(table.problems == [])
    #expect(table.rows == ["Z"])
  }

  @Test func aViewWithoutADataSourceIsReported() {
    let table = RecordingTableView<Int>()
    table.reloadData()
    #expect(table.problems == ["the view has no data source"])
    #expect(table.rows == [])
  }
}
