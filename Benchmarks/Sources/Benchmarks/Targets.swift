#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// One of the issue's targets, checked against a ratio or a count from this run.
struct Target {
  let name: String
  let measured: Double?
  let limit: String
  let met: Bool?
  /// Shown instead of `measured` when set (a yes/no check).
  var shown: String?
}

struct TargetsReport {
  var targets: [Target] = []

  mutating func ratio(
    _ name: String, _ numerator: Double?, _ denominator: Double?, atMost limit: Double
  ) {
    guard let numerator, let denominator, denominator > 0 else {
      targets.append(Target(name: name, measured: nil, limit: "≤ \(formatNumber(limit))", met: nil))
      return
    }
    let ratio = numerator / denominator
    targets.append(
      Target(
        name: name, measured: ratio, limit: "≤ \(formatNumber(limit))×", met: ratio <= limit))
  }

  mutating func value(_ name: String, _ value: Double?, atMost limit: Double) {
    targets.append(
      Target(
        name: name, measured: value, limit: "≤ \(formatNumber(limit))",
        met: value.map { $0 <= limit }))
  }

  mutating func value(_ name: String, _ value: Double?, below limit: Double, unit: String) {
    targets.append(
      Target(
        name: name, measured: value, limit: "< \(formatNumber(limit)) \(unit)",
        met: value.map { $0 < limit }))
  }

  mutating func check(_ name: String, _ passed: Bool?) {
    targets.append(
      Target(
        name: name, measured: nil, limit: "yes", met: passed,
        shown: passed.map { $0 ? "yes" : "no" }))
  }

  mutating func value(_ name: String, _ value: Double?, atMost limit: Double, unit: String) {
    targets.append(
      Target(
        name: name, measured: value, limit: "≤ \(formatNumber(limit)) \(unit)",
        met: value.map { $0 <= limit }))
  }

  /// A value the issue asks to report without a limit.
  mutating func value(_ name: String, _ value: Double?) {
    targets.append(Target(name: name, measured: value, limit: "no target", met: nil))
  }

  /// A ratio the issue asks to report without a limit.
  mutating func ratio(_ name: String, _ numerator: Double?, _ denominator: Double?) {
    let ratio = numerator.flatMap { numerator in
      denominator.flatMap { $0 > 0 ? numerator / $0 : nil }
    }
    targets.append(Target(name: name, measured: ratio, limit: "no target", met: nil))
  }

  func render() -> String {
    var lines = ["### Targets (ratios from this run)", ""]
    lines.append("| target | measured | limit | met |")
    lines.append("|---|---:|---:|:---:|")
    for target in targets {
      let measured =
        target.shown ?? target.measured.map { format($0, fractionDigits: 2) } ?? "n/a"
      let met = target.met.map { $0 ? "yes" : "**no**" } ?? "n/a"
      lines.append("| \(target.name) | \(measured) | \(target.limit) | \(met) |")
    }
    return lines.joined(separator: "\n")
  }
}

/// The issue's targets, from the tables of this run.
func targetsReport(_ tables: [String: Table]) -> TargetsReport {
  var report = TargetsReport()
  if let footprint = tables["footprint"] {
    // Issue 41: an idle observable costs at most twice the tutorial's box; a `map` level at
    // most 256 bytes and 1 µs.
    for (name, column) in [("bytes", Column.heapBytes), ("creation time", Column.creationTime)] {
      report.ratio(
        "idle `Observable` / tutorial box, \(name) (issue 41)",
        footprint.value(FootprintRow.idle, column),
        footprint.value(FootprintRow.tutorialBox, column), atMost: 2)
    }
    report.value(
      "`map` level, heap bytes (issue 41)",
      footprint.value(FootprintRow.mapLevel, Column.heapBytes), atMost: 256)
    report.value(
      "`map` level, ns to create (issue 41)",
      footprint.value(FootprintRow.mapLevel, Column.creationTime), atMost: 1000)
  }
  if let fanOut = tables["fanOut"] {
    for count in [10, 100, 1000] {
      let row = "N = \(count)"
      report.ratio(
        "fan-out N = \(count): addObserver / weak-owner floor",
        fanOut.value(row, Column.owner), fanOut.value(row, Column.floor), atMost: 1.1)
    }
    for count in [10, 100, 1000] {
      let row = "N = \(count)"
      report.ratio(
        "fan-out N = \(count): observe / closure loop",
        fanOut.value(row, Column.token), fanOut.value(row, Column.closures), atMost: 2)
    }
    for count in [10, 100, 1000] {
      let row = "N = \(count)"
      report.ratio(
        "fan-out N = \(count): observe / OpenCombine",
        fanOut.value(row, Column.token), fanOut.value(row, Column.combine), atMost: 1)
    }
  }
  if let allocations = tables["allocations"] {
    for row in allocations.rows {
      for column in [Column.owner, Column.token] {
        report.value(
          "allocations per set, \(row.label): \(column)", row.values[column], atMost: 0)
      }
    }
  }
  if let scale = tables["propagationScale"], scale.columns.count >= 3 {
    // The first and the last counts (the last column is their ratio).
    let small = scale.columns[0]
    let large = scale.columns[scale.columns.count - 2]
    for dimension in ScaleDimension.all {
      report.ratio(
        "\(dimension): per element at \(large) / at \(small) (issue 32)",
        scale.value(dimension, large), scale.value(dimension, small), atMost: 2)
    }
  }
  if let bytes = tables["bytes"], let row = bytes.rows.first {
    report.ratio(
      "bytes per observer (\(row.label)): addObserver / weak-owner floor",
      row.values[Column.owner], row.values[Column.floor], atMost: 1.1)
    report.value(
      "bytes per observer (\(row.label)): observe (token)", row.values[Column.token],
      atMost: 100)
  }
  if let churn = tables["churn"], let row = churn.rows.first {
    report.ratio(
      "churn: addObserver / weak-owner floor", row.values[Column.owner],
      row.values[Column.floor], atMost: 1.1)
    report.ratio(
      "churn: addObserver / OpenCombine", row.values[Column.owner], row.values[Column.combine],
      atMost: 0.5)
    report.ratio(
      "churn: observe / OpenCombine", row.values[Column.token], row.values[Column.combine],
      atMost: 0.5)
  }
  for (name, label) in [("threads", "two threads"), ("eightThreads", "eight threads")] {
    guard let table = tables[name], let row = table.rows.first else { continue }
    for (column, title) in [(Column.owner, "addObserver"), (Column.token, "observe")] {
      report.ratio(
        "\(label) setting one observable: \(title) / OpenCombine (issue 28)", row.values[column],
        row.values[Column.combine], atMost: 1.5)
    }
  }
  if let bindings = tables["bindings"] {
    let chain = "map → removeDuplicates → bind(to:)"
    report.ratio(
      "derived chain: library / hand-written closure",
      bindings.value(chain, Column.libraryBinding), bindings.value(chain, Column.handWritten),
      atMost: 2)
    report.ratio(
      "derived chain: library / hand-written with the same key-path write (issue 14)",
      bindings.value(chain, Column.libraryBinding),
      bindings.value(chain, Column.handWrittenKeyPath),
      atMost: 1.5)
    let keyPath = "bind(to: target, \\.value)"
    report.ratio(
      "key-path binding: library / hand-written closure (no target in the issue)",
      bindings.value(keyPath, Column.libraryBinding), bindings.value(keyPath, Column.handWritten),
      atMost: 2)
    report.ratio(
      "key-path binding: library / hand-written with the same key-path write (no target)",
      bindings.value(keyPath, Column.libraryBinding),
      bindings.value(keyPath, Column.handWrittenKeyPath),
      atMost: 2)
  }
  if let allocations = tables["bindingAllocations"] {
    // The standard library's key-path write into a class instance allocates on every write
    // (with or without didSet), so the chain is held to what it adds over the same write by hand.
    for (row, label) in [
      ("map → removeDuplicates → bind(to:)", "a didSet property"),
      ("map → removeDuplicates → bind(to:), property without didSet", "a stored property"),
    ] {
      report.value(
        "allocations per set, map → removeDuplicates → bind(to:) into \(label): library minus "
          + "the same key-path write by hand (issue 14)",
        allocations.value(row, Column.libraryBinding).flatMap { library in
          allocations.value(row, Column.handWrittenKeyPath).map { library - $0 }
        },
        atMost: 0)
    }
  }
  if let transactions = tables["transactions"] {
    report.ratio(
      "transaction of two sets / two plain sets, ns per update (issue 14)",
      transactions.value("ns per update", Column.transaction),
      transactions.value("ns per update", Column.plainSets))
  }
  if let mainQueue = tables["mainQueue"] {
    report.ratio(
      "Driver .coalescing: main-queue hops / values set",
      mainQueue.value("main-queue hops", Column.driverCoalescing),
      mainQueue.rows.isEmpty ? nil : mainQueue.value("values delivered", Column.driverEvery),
      atMost: 0.1)
    for column in [Column.driverEvery, Column.mainActorObserve, Column.mainActorOwner] {
      report.ratio(
        "background sets: \(column) / \(Column.mainAsync), ns per set (issue 28)",
        mainQueue.value("ns per set, until the last value arrived", column),
        mainQueue.value("ns per set, until the last value arrived", Column.mainAsync),
        atMost: 0.8)
    }
  }
  if let flood = tables["flood"] {
    addFloodTargets(flood, to: &report)
  }
  issue11Targets(tables, into: &report)
  issue12Targets(tables, into: &report)
  issue13Targets(tables, into: &report)
  if let collections = tables["collections"] {
    addCollectionsTargets(collections, to: &report)
  }
  if let edits = tables["edits"] {
    addEditsTargets(edits, to: &report)
  }
  return report
}

/// Issue 11: the nonisolated paths keep their numbers; main-actor observers on the main thread.
private func issue11Targets(_ tables: [String: Table], into report: inout TargetsReport) {
  if let fanOut = tables["fanOut"] {
    report.ratio(
      "fan-out N = 100: observe (token) / closure loop (issue 11)",
      fanOut.value("N = 100", Column.token), fanOut.value("N = 100", Column.closures),
      atMost: 1.05)
    report.ratio(
      "fan-out N = 100: addObserver / weak-owner floor (issue 11)",
      fanOut.value("N = 100", Column.owner), fanOut.value("N = 100", Column.floor),
      atMost: 1.05)
  }
  if let mainThread = tables["mainThread"] {
    report.ratio(
      "main-thread sets, N = 100: observe from @MainActor / nonisolated (issue 11)",
      mainThread.value("N = 100", Column.mainActorObserve),
      mainThread.value("N = 100", Column.nonisolatedToken), atMost: 1.2)
    report.ratio(
      "main-thread sets, N = 100: addObserver from @MainActor / nonisolated (issue 11)",
      mainThread.value("N = 100", Column.mainActorOwner),
      mainThread.value("N = 100", Column.nonisolatedOwner), atMost: 1.2)
  }
  if let mainQueue = tables["mainQueue"] {
    for column in [Column.mainActorObserve, Column.mainActorOwner] {
      report.ratio(
        "background sets, \(column): main-queue hops per value set (issue 11)",
        mainQueue.value("main-queue hops", column),
        mainQueue.value("values delivered", Column.driverEvery))
    }
  }
}

/// Issue 12: a contended producer and a Driver backlog.
private func issue12Targets(_ tables: [String: Table], into report: inout TargetsReport) {
  if let contended = tables["contended"] {
    let value = { (row: String) in contended.value(row, "measured") }
    report.value(
      "contended producer: worst main-thread call (issues 12 and 28)",
      value("worst main-thread call, ms"), below: 20, unit: "ms")
    report.value(
      "contended producer: peak resident set (issue 12)",
      value("peak resident set (VmHWM, reset at the start), MiB"), below: 256, unit: "MiB")
    report.check(
      "contended producer: the producer finished (issue 12)",
      value("producer finished (1 = yes)").map { $0 == 1 })
    report.check(
      "contended producer: the binding ends on the producer's last value (issue 12)",
      value("binding ends on the producer's last value (1 = yes)").map { $0 == 1 })
  }
  if let backlog = tables["driverBacklog"] {
    report.value(
      "Driver backlog: longest gap between 2 ms main-queue heartbeats, worst of the runs (issue 12)",
      backlog.value("longest gap between heartbeats, worst run, ms", "measured"), below: 50,
      unit: "ms")
    report.check(
      "Driver backlog: every value delivered, in order (issue 12)",
      backlog.value("all delivered in order in every run (1 = yes)", "measured").map { $0 == 1 })
  }
}

/// Issue 13: registration at scale, bytes per registration, `[.old, .new]` through addObserver.
private func issue13Targets(_ tables: [String: Table], into report: inout TargetsReport) {
  if let scale = tables["scale"], scale.columns.count == 2 {
    let small = scale.columns[0]
    let large = scale.columns[1]
    for operation in [
      ScaleOperation.ownerRegister, ScaleOperation.removeObserver, ScaleOperation.cancel,
    ] {
      report.ratio(
        "\(operation): per operation at \(large) / at \(small) (issue 13)",
        scale.value(operation, large), scale.value(operation, small), atMost: 2)
    }
    for operation in [ScaleOperation.hashMapRegister, ScaleOperation.hashMapRemove] {
      report.ratio(
        "for comparison, \(operation): per operation at \(large) / at \(small)",
        scale.value(operation, large), scale.value(operation, small))
    }
    for column in [small, large] {
      report.ratio(
        "\(column): addObserver default / removeIfExists: false (issue 13)",
        scale.value(ScaleOperation.ownerRegister, column),
        scale.value(ScaleOperation.ownerBesideRegister, column), atMost: 3)
    }
    for column in [small, large] {
      report.ratio(
        "\(column): registering owners, addObserver / weak-owner floor (issue 13)",
        scale.value(ScaleOperation.ownerRegister, column),
        scale.value(ScaleOperation.floorRegister, column), atMost: 1.5)
    }
  }
  if let bytes = tables["bytes"], let row = bytes.rows.first {
    report.value(
      "bytes per token registration (\(row.label)) (issue 13)", row.values[Column.token],
      atMost: 100)
    report.ratio(
      "bytes per owner registration (\(row.label)): addObserver / weak-owner floor (issue 13)",
      row.values[Column.owner], row.values[Column.floor], atMost: 1.05)
  }
  if let oldNew = tables["oldNew"] {
    for row in oldNew.rows {
      report.ratio(
        "`[.old, .new]` \(row.label): addObserver / weak-owner floor (issue 13)",
        row.values[Column.owner], row.values[Column.floor], atMost: 1.15)
    }
  }
}

/// Date, machine and toolchain, for the table's header.
func machineDescription() -> String {
  var seconds = time(nil)
  var parts = tm()
  gmtime_r(&seconds, &parts)
  func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
  let date =
    "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
    + "\(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
  #if compiler(>=6.3)
    let compiler = "Swift ≥ 6.3"
  #elseif compiler(>=6.2)
    let compiler = "Swift 6.2"
  #elseif compiler(>=6.1)
    let compiler = "Swift 6.1"
  #else
    let compiler = "Swift 6.0"
  #endif
  let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
  return
    "- Date: \(date)\n- Machine: \(cores) cores, \(cpuModel())\n- Toolchain: \(compiler), -c release"
}

private func cpuModel() -> String {
  guard let file = fopen("/proc/cpuinfo", "r") else { return "unknown CPU" }
  defer { fclose(file) }
  var buffer = [CChar](repeating: 0, count: 512)
  while fgets(&buffer, Int32(buffer.count), file) != nil {
    let line = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if line.hasPrefix("model name"), let colon = line.firstIndex(of: ":") {
      return line[line.index(after: colon)...].trimmingCharacters()
    }
  }
  return "unknown CPU"
}

extension Substring {
  fileprivate func trimmingCharacters() -> String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == "\n" || $0 == " " }.reversed())
  }
}

/// Issue 40, item 6: during a flood of changes set inside callbacks, a main-queue setter waits
/// at most 20 ms and memory stays flat.
func addFloodTargets(_ flood: Table, to report: inout TargetsReport) {
  report.value(
    "flood: worst main-queue set of `x`, ms (issue 40)",
    flood.value(FloodRow.worstWait, FloodRow.main), atMost: 20, unit: "ms")
  report.value(
    "flood: worst plain set of `x` on its own thread, ms (issue 40)",
    flood.value(FloodRow.worstWait, FloodRow.plain))
  report.value(
    "flood: peak resident set growth, MiB (issue 40: flat)",
    flood.value(FloodRow.growth, FloodRow.flood), atMost: 16, unit: "MiB")
  report.check(
    "flood: every setter's change delivered, the last set reached both observers (issue 40)",
    flood.value(FloodRow.settled, FloodRow.flood).flatMap { settled in
      flood.value(FloodRow.undelivered, FloodRow.flood).map { settled == 1 && $0 == 0 }
    })
}
