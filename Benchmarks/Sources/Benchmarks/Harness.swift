#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Monotonic nanoseconds.
func now() -> UInt64 {
  var spec = timespec()
  clock_gettime(CLOCK_MONOTONIC, &spec)
  return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// How much work one run does: the full run, or a smoke run that executes every workload once
/// with tiny counts to prove it still builds and delivers (no timing meaning).
struct RunConfiguration {
  var smoke = false
  /// Timed samples per column; the median is reported.
  var repetitions = 15
  /// Units of work (usually delivered notifications) per timed sample.
  var unitsPerSample = 300_000

  static let smokeRun = RunConfiguration(smoke: true, repetitions: 1, unitsPerSample: 1)

  func iterations(unitsPerIteration: Int) -> Int {
    max(1, unitsPerSample / max(1, unitsPerIteration))
  }
}

/// One column of one row: a prepared setup whose `run` does `iterations` iterations of the
/// workload, each worth `unitsPerIteration` units (notifications, churn cycles, ...).
struct Contender {
  let column: String
  let unitsPerIteration: Int
  let run: (_ iterations: Int) -> Void
  /// What the observers summed, compared across columns that must deliver the same values.
  let checksum: () -> Int
  /// Whether `checksum` must equal the other columns' (false where a design delivers more).
  var comparable = true

  init(
    _ column: String,
    unitsPerIteration: Int,
    checksum: @escaping () -> Int = { 0 },
    run: @escaping (_ iterations: Int) -> Void
  ) {
    self.column = column
    self.unitsPerIteration = unitsPerIteration
    self.run = run
    self.checksum = checksum
  }
}

/// Times every contender of a row in round-robin repetitions (rotating who goes first), so that
/// machine drift hits every column alike, and returns the median nanoseconds per unit.
///
/// Every contender runs the same number of iterations, so columns whose observers sum the same
/// values end with the same checksum.
///
/// `workPerIteration` sizes the samples (in notifications) when it differs from the unit, as
/// in churn, where one cycle delivers to every permanent observer.
func measure(
  _ contenders: [Contender],
  workPerIteration: Int? = nil,
  configuration: RunConfiguration
) -> [String: Double] {
  let work = workPerIteration ?? contenders.map(\.unitsPerIteration).max() ?? 1
  let iterations = configuration.iterations(unitsPerIteration: work)
  if !configuration.smoke {
    for contender in contenders { contender.run(max(1, iterations / 10)) }
  }
  var samples = [[Double]](repeating: [], count: contenders.count)
  for repetition in 0..<configuration.repetitions {
    for offset in 0..<contenders.count {
      let index = (repetition + offset) % contenders.count
      let contender = contenders[index]
      let start = now()
      contender.run(iterations)
      let elapsed = Double(now() - start)
      samples[index].append(elapsed / Double(iterations * contender.unitsPerIteration))
    }
  }
  var result: [String: Double] = [:]
  for (index, contender) in contenders.enumerated() {
    result[contender.column] = median(samples[index])
  }
  return result
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Fails the run if columns that must deliver the same values did not.
func expectSameChecksums(_ contenders: [Contender], in row: String) {
  let sums = contenders.filter(\.comparable).map { ($0.column, $0.checksum()) }
  guard let first = sums.first else { return }
  for (column, sum) in sums where sum != first.1 {
    failures.append("\(row): \(column) summed \(sum), \(first.0) summed \(first.1)")
  }
}

nonisolated(unsafe) var failures: [String] = []

/// A result table: one row per workload parameter, one column per contender.
struct Table {
  let title: String
  let unit: String
  let columns: [String]
  var rows: [(label: String, values: [String: Double])] = []
  var format: (Double) -> String = { formatNumber($0) }

  init(title: String, unit: String, columns: [String]) {
    self.title = title
    self.unit = unit
    self.columns = columns
  }

  mutating func add(_ label: String, _ values: [String: Double]) {
    rows.append((label, values))
  }

  func value(_ row: String, _ column: String) -> Double? {
    rows.first { $0.label == row }?.values[column]
  }

  func render() -> String {
    var lines = ["### \(title) (\(unit))", ""]
    lines.append("| | " + columns.joined(separator: " | ") + " |")
    lines.append("|---|" + String(repeating: "---:|", count: columns.count))
    for row in rows {
      let cells = columns.map { column in row.values[column].map(format) ?? "n/a" }
      lines.append("| \(row.label) | " + cells.joined(separator: " | ") + " |")
    }
    return lines.joined(separator: "\n")
  }
}

func formatNumber(_ value: Double) -> String {
  if value.isNaN { return "n/a" }
  if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
  let digits = abs(value) >= 100 ? 0 : (abs(value) >= 10 ? 1 : 2)
  return format(value, fractionDigits: digits)
}

func format(_ value: Double, fractionDigits digits: Int) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let scaled = Int((abs(value) * scale).rounded())
  let whole = scaled / Int(scale)
  var text = (value < 0 ? "-" : "") + String(whole)
  if digits > 0 {
    let fraction = String(scaled % Int(scale))
    text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
  }
  return text
}

/// A progress line on standard error, so that the tables on standard output stay clean.
func progress(_ line: String) {
  var text = line + "\n"
  text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
