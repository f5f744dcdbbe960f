#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// One of the targets, checked against a ratio or a count from this run.
struct Target {
  let name: String
  let measured: Double?
  let limit: String
  let met: Bool?
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

  func render() -> String {
    var lines = ["### Targets (ratios from this run)", ""]
    lines.append("| target | measured | limit | met |")
    lines.append("|---|---:|---:|:---:|")
    for target in targets {
      let measured = target.measured.map { format($0, fractionDigits: 2) } ?? "n/a"
      let met = target.met.map { $0 ? "yes" : "**no**" } ?? "n/a"
      lines.append("| \(target.name) | \(measured) | \(target.limit) | \(met) |")
    }
    return lines.joined(separator: "\n")
  }
}

/// The targets, from the tables of this run.
func targetsReport(_ tables: [String: Table]) -> TargetsReport {
  var report = TargetsReport()
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
  if let bindings = tables["bindings"] {
    let chain = "map → removeDuplicates → bind(to:)"
    report.ratio(
      "derived chain: library / hand-written closure",
      bindings.value(chain, Column.libraryBinding), bindings.value(chain, Column.handWritten),
      atMost: 2)
    report.ratio(
      "derived chain: library / hand-written with the same key-path write (no target)",
      bindings.value(chain, Column.libraryBinding),
      bindings.value(chain, Column.handWrittenKeyPath),
      atMost: 2)
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
  if let mainQueue = tables["mainQueue"] {
    report.ratio(
      "Driver .coalescing: main-queue hops / values set",
      mainQueue.value("main-queue hops", Column.driverCoalescing),
      mainQueue.rows.isEmpty ? nil : mainQueue.value("values delivered", Column.driverEvery),
      atMost: 0.1)
  }
  return report
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
