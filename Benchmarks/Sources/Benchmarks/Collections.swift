import MallocCounter
import PropertyObservation

import struct Foundation.UUID

// The collections workloads of issue 29: appending to a large observed array, diffing a replaced
// array by UUID against a hash-map floor, and appending to a filtered array. Each row is timed
// at two sizes in the same run, so the targets are ratios that cancel the machine's speed.

/// A list item keyed by a UUID, as the replace workload asks.
private struct Item: Identifiable, Equatable {
  let id: UUID
  var version: Int
}

/// The appends timed per run: the storage has room for them (reserved beforehand), so the rows
/// compare the append itself at each size, not `Array`'s growth (a copy and fresh pages, which
/// an `Array` of that size pays the same; the growth row measures it).
private let appendsPerRun = 1_000

/// Nanoseconds and heap allocations per append of ``appendsPerRun`` values to a source of
/// `count` elements with room for them, while an observer watches what `observed` makes of the
/// source; the medians of `repetitions` runs.
private func appendCost(
  count: Int, repetitions: Int,
  observed: (ObservableArray<Int>) -> ReadOnlyObservableArray<Int> = { $0 }
) -> (ns: Double, allocations: Double) {
  var times: [Double] = []
  var allocations: [Double] = []
  for _ in 0..<repetitions {
    let source = ObservableArray(0..<count)
    source.reserveCapacity(count + appendsPerRun)
    let watched = observed(source)
    let delivered = Box(0)
    let token = watched.observe { changes in delivered.value &+= changes.insertions.count }
    let before = mc_allocations()
    let start = now()
    for value in 0..<appendsPerRun { source.append(value * 2) }
    times.append(Double(now() - start) / Double(appendsPerRun))
    allocations.append(Double(mc_allocations() - before) / Double(appendsPerRun))
    token.cancel()
    consume(delivered.value + watched.count)
  }
  return (median(times), median(allocations))
}

/// Nanoseconds per append to an observed array of `count` elements without reserved room,
/// amortized over `count` appends (one doubling of the storage), next to a plain `Array` doing
/// the same: what growth costs at that size.
private func growthCost(count: Int, repetitions: Int) -> (array: Double, plain: Double) {
  var times: [Double] = []
  var plainTimes: [Double] = []
  for _ in 0..<repetitions {
    let array = ObservableArray(0..<count)
    let delivered = Box(0)
    let token = array.observe { changes in delivered.value &+= changes.insertions.count }
    let start = now()
    for value in 0..<count { array.append(value) }
    times.append(Double(now() - start) / Double(count))
    token.cancel()
    var plain = Array(0..<count)
    let plainStart = now()
    for value in 0..<count { plain.append(value) }
    plainTimes.append(Double(now() - plainStart) / Double(count))
    consume(delivered.value + plain.count)
  }
  return (median(times), median(plainTimes))
}

/// Nanoseconds per set of an `Observable` holding a change set, with one observer: what the
/// core's round costs for the value an array delivers, and heap allocations per set.
private func changeSetSendCost(sets: Int, repetitions: Int) -> (ns: Double, allocations: Double) {
  var times: [Double] = []
  var allocations: [Double] = []
  let changes = ArrayChangeSet.inserting(ArraySnapshot([1, 2, 3]))
  for _ in 0..<repetitions {
    let observable = Observable(changes)
    let delivered = Box(0)
    let token = observable.observe { changes, _ in delivered.value &+= changes.insertions.count }
    let before = mc_allocations()
    let start = now()
    for _ in 0..<sets { observable.value = changes }
    times.append(Double(now() - start) / Double(sets))
    allocations.append(Double(mc_allocations() - before) / Double(sets))
    token.cancel()
    consume(delivered.value)
  }
  return (median(times), median(allocations))
}

/// The old and new arrays of the replace workload: from `count` items, `changed` deleted,
/// `changed` inserted and `moved` moved to random places; deterministic for a given count.
private func replaceFixture(count: Int, changed: Int, moved: Int) -> (old: [Item], new: [Item]) {
  var random = SystemRandomNumberGenerator()
  let old = (0..<count).map { Item(id: UUID(), version: $0) }
  var new = old
  for _ in 0..<changed { new.remove(at: Int.random(in: 0..<new.count, using: &random)) }
  for _ in 0..<moved {
    let item = new.remove(at: Int.random(in: 0..<new.count, using: &random))
    new.insert(item, at: Int.random(in: 0...new.count, using: &random))
  }
  for _ in 0..<changed {
    new.insert(Item(id: UUID(), version: -1), at: Int.random(in: 0...new.count, using: &random))
  }
  return (old, new)
}

/// Nanoseconds for one `replace(with:)` from `old` to `new` (alternating directions, so each
/// run diffs the same amount), with the allocations of one replace, and nanoseconds for the
/// hash-map floor: build `[UUID: Int]` over the old array, probe it with the new one.
private func replaceCost(
  old: [Item], new: [Item], repetitions: Int
) -> (replace: Double, floor: Double, allocations: Double, moves: Int) {
  let array = ObservableArray(old)
  let moves = Box(0)
  let token = array.observe { changes in moves.value = changes.moves.count }
  var replaceTimes: [Double] = []
  var floorTimes: [Double] = []
  var allocations: [Double] = []
  var target = new
  var other = old
  for _ in 0..<repetitions {
    let before = mc_allocations()
    let start = now()
    array.replace(with: target)
    replaceTimes.append(Double(now() - start))
    allocations.append(Double(mc_allocations() - before))
    swap(&target, &other)

    let floorStart = now()
    var table = [UUID: Int](minimumCapacity: old.count)
    for (offset, item) in old.enumerated() { table[item.id] = offset }
    var found = 0
    for item in new { found &+= table[item.id] ?? -1 }
    floorTimes.append(Double(now() - floorStart))
    consume(found)
  }
  token.cancel()
  return (median(replaceTimes), median(floorTimes), median(allocations), moves.value)
}

/// The collections table: one row per workload and size.
func collectionsTable(smoke: Bool) -> Table {
  let small = smoke ? 100 : 1_000
  let large = smoke ? 1_000 : 100_000
  let repetitions = smoke ? 1 : 11
  var table = Table(
    title: "Collections: ObservableArray with one observer", unit: "ns per operation",
    columns: ["ns", "allocations", "moves"])
  for count in [small, large] {
    let cost = appendCost(count: count, repetitions: repetitions)
    table.add("append, n = \(count)", ["ns": cost.ns, "allocations": cost.allocations])
  }
  let growth = growthCost(count: large, repetitions: repetitions)
  table.add("append with growth, n = \(large), amortized", ["ns": growth.array])
  table.add("Array.append with growth, n = \(large), amortized", ["ns": growth.plain])
  let send = changeSetSendCost(sets: small, repetitions: repetitions)
  table.add(
    "core: set an Observable<ArrayChangeSet>", ["ns": send.ns, "allocations": send.allocations])
  for count in [small, large] {
    // Every appended value is even, so every append passes the filter.
    let cost = appendCost(count: count, repetitions: repetitions) { $0.filter { $0 % 2 == 0 } }
    table.add("filter append, n = \(count)", ["ns": cost.ns, "allocations": cost.allocations])
  }
  for count in [large / 10, large] {
    let fixture = replaceFixture(count: count, changed: count / 10, moved: count / 50)
    let cost = replaceCost(old: fixture.old, new: fixture.new, repetitions: repetitions)
    table.add(
      "replace(with:), n = \(count)",
      ["ns": cost.replace, "allocations": cost.allocations, "moves": Double(cost.moves)])
    table.add("hash-map floor, n = \(count)", ["ns": cost.floor])
  }
  return table
}

/// The collections targets, from `collectionsTable`'s rows.
func addCollectionsTargets(_ table: Table, to report: inout TargetsReport) {
  guard let appendRows = Optional(table.rows.filter { $0.label.hasPrefix("append, ") }),
    appendRows.count == 2
  else { return }
  report.ratio(
    "collections: append at 100 000 / at 1 000", appendRows[1].values["ns"],
    appendRows[0].values["ns"], atMost: 1.2)
  let filterRows = table.rows.filter { $0.label.hasPrefix("filter append, ") }
  if filterRows.count == 2 {
    report.ratio(
      "collections: filter append at 100 000 / at 1 000 (O(1))", filterRows[1].values["ns"],
      filterRows[0].values["ns"], atMost: 1.2)
  }
  let replaceRows = table.rows.filter { $0.label.hasPrefix("replace(with:)") }
  let floorRows = table.rows.filter { $0.label.hasPrefix("hash-map floor") }
  if replaceRows.count == 2 && floorRows.count == 2 {
    report.ratio(
      "collections: replace(with:) / hash-map floor, n = 100 000", replaceRows[1].values["ns"],
      floorRows[1].values["ns"], atMost: 1.5)
    report.ratio(
      "collections: replace allocations, n = 100 000 / n = 10 000",
      replaceRows[1].values["allocations"], replaceRows[0].values["allocations"], atMost: 1.0)
  }
}
