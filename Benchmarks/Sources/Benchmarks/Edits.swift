import Dispatch
import PropertyObservation

// The element edits of issue 43: set, insert, remove and move on an observed `ObservableArray`
// of 1 000, 10 000 and 100 000 `Int`s, and an append to one bound to a table, each with an
// observer that lets its change sets go and with one that keeps the latest snapshot, beside
// Swift's `Array` doing the same edit and a block copy of the elements. Each row is timed at the
// three sizes in the same run, so the target is a ratio that cancels the machine's speed.

/// The edits timed per run of a row at `count` elements: fewer at 100 000, where an edit that
/// copies the elements takes tens of microseconds.
private func editsPerRun(_ count: Int) -> Int {
  count >= 100_000 ? 200 : 1_000
}

/// What an edit row does to an `ObservableArray` (or to an `Array`) of `count` elements, its
/// `step`-th time.
private enum Edit: CaseIterable {
  case set, insert, remove, move

  var name: String {
    switch self {
    case .set: "set [n/2]"
    case .insert: "insert at n/2"
    case .remove: "remove at n/2"
    case .move: "move n/4 → 3n/4"
    }
  }

  /// The elements a run starts from: room for the inserts, and the removes' extra elements.
  func initialCount(_ count: Int) -> Int {
    self == .remove ? count + editsPerRun(count) : count
  }

  func apply(to array: ObservableArray<Int>, count: Int, step: Int) {
    switch self {
    case .set: array[count / 2] = step
    case .insert: array.insert(step, at: count / 2)
    case .remove: array.remove(at: count / 2)
    case .move: array.move(from: count / 4, to: 3 * count / 4)
    }
  }

  func apply(to array: inout [Int], count: Int, step: Int) {
    switch self {
    case .set: array[count / 2] = step
    case .insert: array.insert(step, at: count / 2)
    case .remove: array.remove(at: count / 2)
    case .move: array.insert(array.remove(at: count / 4), at: 3 * count / 4)
    }
  }
}

/// Nanoseconds per `edit` of an observed array of `count` elements, the median of
/// `repetitions` runs; the observer keeps the latest change set's snapshot when `keepsSnapshot`.
private func editCost(_ edit: Edit, count: Int, keepsSnapshot: Bool, repetitions: Int) -> Double {
  let edits = editsPerRun(count)
  var times: [Double] = []
  for _ in 0..<repetitions {
    let array = ObservableArray(0..<edit.initialCount(count))
    array.reserveCapacity(edit.initialCount(count) + edits)
    let delivered = Box(0)
    let kept = Box<ArraySnapshot<Int>?>(nil)
    let token = array.observe { changes in
      delivered.value &+= changes.changeCount
      if keepsSnapshot { kept.value = changes.elements }
    }
    let start = now()
    for step in 0..<edits { edit.apply(to: array, count: count, step: step) }
    times.append(Double(now() - start) / Double(edits))
    token.cancel()
    consume(delivered.value + (kept.value?.count ?? 0))
  }
  return median(times)
}

/// Nanoseconds per `edit` of a plain `Array` of `count` elements.
private func plainCost(_ edit: Edit, count: Int, repetitions: Int) -> Double {
  let edits = editsPerRun(count)
  var times: [Double] = []
  for _ in 0..<repetitions {
    var array = Array(0..<edit.initialCount(count))
    array.reserveCapacity(edit.initialCount(count) + edits)
    let start = now()
    for step in 0..<edits { edit.apply(to: &array, count: count, step: step) }
    times.append(Double(now() - start) / Double(edits))
    consume(array.count)
  }
  return median(times)
}

/// Nanoseconds per block copy of an `Array` of `count` `Int`s (a write to a shared array).
private func blockCopyCost(count: Int, repetitions: Int) -> Double {
  let copies = editsPerRun(count)
  var times: [Double] = []
  let original = Array(0..<count)
  for _ in 0..<repetitions {
    var checksum = 0
    let start = now()
    for step in 0..<copies {
      var copy = original
      copy[step % count] = step
      checksum &+= copy[count / 2]
    }
    times.append(Double(now() - start) / Double(copies))
    consume(checksum)
  }
  return median(times)
}

/// A table view that keeps the rows it is given, as a data source does.
@MainActor
private final class RowsTarget: BatchUpdateTarget {
  var rows: [Int] = []
  var batches = 0

  func reloadAll(_ elements: [Int]) {
    rows = elements
  }

  func performBatch(_ batch: BatchUpdate<Int>) {
    rows = batch.elements
    batches += 1
  }
}

/// Nanoseconds per append to an array of `count` elements bound to a table view, on the main
/// actor; an observer keeps the latest snapshot when `keepsSnapshot`.
private func boundAppendCost(count: Int, keepsSnapshot: Bool, repetitions: Int) -> Double {
  DispatchQueue.main.sync {
    MainActor.assumeIsolated {
      let appends = editsPerRun(count)
      var times: [Double] = []
      for _ in 0..<repetitions {
        let array = ObservableArray(0..<count)
        array.reserveCapacity(count + appends)
        let table = RowsTarget()
        array.bind(to: table, reloadThreshold: 100)
        var kept: ArraySnapshot<Int>?
        let token = array.observe { changes in
          if keepsSnapshot { kept = changes.elements }
        }
        let start = now()
        for value in 0..<appends { array.append(value) }
        times.append(Double(now() - start) / Double(appends))
        token.cancel()
        array.removeObserver(table)
        consume(table.rows.count + table.batches + (kept?.count ?? 0))
      }
      return median(times)
    }
  }
}

/// The edits table: one row per edit and size.
func editsTable(smoke: Bool, repetitions: Int) -> Table {
  let sizes = smoke ? [100, 1_000] : [1_000, 10_000, 100_000]
  let repetitions = smoke ? 1 : repetitions
  var table = Table(
    title: "Element edits: ObservableArray<Int> with one observer", unit: "ns per edit",
    columns: ["dropped", "kept", "Array"])
  for edit in Edit.allCases {
    for count in sizes {
      table.add(
        "\(edit.name), n = \(count)",
        [
          "dropped": editCost(edit, count: count, keepsSnapshot: false, repetitions: repetitions),
          "kept": editCost(edit, count: count, keepsSnapshot: true, repetitions: repetitions),
          "Array": plainCost(edit, count: count, repetitions: repetitions),
        ])
    }
  }
  for count in sizes {
    table.add(
      "bound append, n = \(count)",
      [
        "dropped": boundAppendCost(count: count, keepsSnapshot: false, repetitions: repetitions),
        "kept": boundAppendCost(count: count, keepsSnapshot: true, repetitions: repetitions),
      ])
  }
  for count in sizes {
    table.add(
      "block copy of n Ints, n = \(count)",
      ["Array": blockCopyCost(count: count, repetitions: repetitions)])
  }
  return table
}

/// The edit target, from `editsTable`'s rows.
func addEditsTargets(_ table: Table, to report: inout TargetsReport) {
  func row(_ label: String) -> [String: Double]? {
    table.rows.first { $0.label == label }?.values
  }
  report.ratio(
    "edits: set at 100 000 / at 1 000 (observer lets snapshots go)",
    row("set [n/2], n = 100000")?["dropped"], row("set [n/2], n = 1000")?["dropped"], atMost: 2)
  report.ratio(
    "edits: set at 100 000 with a kept snapshot / a block copy at 100 000",
    row("set [n/2], n = 100000")?["kept"], row("block copy of n Ints, n = 100000")?["Array"])
}
