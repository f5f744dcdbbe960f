import MallocCounter

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// Runs every workload and prints Markdown tables, then the targets as ratios from this
// one run. `--smoke` runs every workload once with tiny counts (for CI: no timing meaning, but
// it fails if a column delivers different values than the others).

let arguments = CommandLine.arguments.dropFirst()
var configuration = arguments.contains("--smoke") ? RunConfiguration.smokeRun : RunConfiguration()
if let index = arguments.firstIndex(of: "--repetitions"), index + 1 < arguments.endIndex,
  let repetitions = Int(arguments[index + 1])
{
  configuration.repetitions = max(1, repetitions)
}

// `--profile WORKLOAD COLUMN ITERATIONS` runs one column of one workload alone, for
// `valgrind --tool=callgrind` (WORKLOAD: fanout-N, oldnew-N, churn, reentrant).
if let index = arguments.firstIndex(of: "--profile"), index + 3 < arguments.endIndex + 1 {
  let values = Array(arguments[index...].dropFirst().prefix(3))
  let workload = values[0]
  let column = values[1]
  let iterations = Int(values[2]) ?? 100_000
  let contenders: [Contender]
  if workload.hasPrefix("fanout-"), let count = Int(workload.dropFirst(7)) {
    contenders = fanOutContenders(observers: count, oldAndNew: false)
  } else if workload.hasPrefix("oldnew-"), let count = Int(workload.dropFirst(7)) {
    contenders = fanOutContenders(observers: count, oldAndNew: true)
  } else if workload == "churn" {
    contenders = churnContenders(permanent: 100)
  } else if workload == "reentrant" {
    contenders = reentrancyContenders(observers: 10)
  } else {
    contenders = []
  }
  guard let contender = contenders.first(where: { $0.column == column }) else {
    print("unknown workload or column: \(workload) \(column)")
    exit(2)
  }
  contender.run(iterations)
  print("checksum \(contender.checksum())")
  exit(0)
}

let started = now()
let allColumns = [Column.closures, Column.floor, Column.combine, Column.owner, Column.token]
var tables: [String: Table] = [:]
var order: [String] = []

@MainActor func record(_ key: String, _ table: Table) {
  tables[key] = table
  order.append(key)
}

@MainActor func run(_ name: String, _ contenders: [Contender], workPerIteration: Int? = nil)
  -> [String: Double]
{
  let start = now()
  let values = measure(contenders, workPerIteration: workPerIteration, configuration: configuration)
  progress("\(name): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
  expectSameChecksums(contenders, in: name)
  for contender in contenders { consume(contender.checksum()) }
  return values
}

do {
  var table = Table(
    title: "Fan-out, `[.new]`", unit: "ns per delivered notification", columns: allColumns)
  for count in [1, 10, 100, 1000] {
    table.add(
      "N = \(count)",
      run("fan-out N = \(count)", fanOutContenders(observers: count, oldAndNew: false)))
  }
  record("fanOut", table)
}

do {
  var table = Table(
    title: "Fan-out, `[.old, .new]`", unit: "ns per delivered call (two per observer and set)",
    columns: allColumns)
  for count in [10, 100] {
    table.add(
      "N = \(count)",
      run("old-new N = \(count)", fanOutContenders(observers: count, oldAndNew: true)))
  }
  record("oldNew", table)
}

do {
  var table = Table(
    title: "Churn: add an observer, set once, drop it; 100 permanent observers",
    unit: "ns per cycle", columns: allColumns)
  table.add("100 permanent", run("churn", churnContenders(permanent: 100), workPerIteration: 101))
  record("churn", table)
}

do {
  var table = Table(
    title: "Re-entrant sets: observer 1 of 10 sets the value once per outer set",
    unit: "ns per delivered notification",
    columns: [Column.floor, Column.combine, Column.owner, Column.token])
  table.add("N = 10", run("re-entrant", reentrancyContenders(observers: 10)))
  record("reentrant", table)
}

do {
  var table = Table(
    title: "Two threads setting concurrently", unit: "ns per delivered notification",
    columns: [Column.lockedFloor, Column.combine, Column.owner, Column.token])
  table.add("N = 10", run("two threads", concurrencyContenders(observers: 10)))
  record("threads", table)
}

do {
  var table = Table(
    title: "Heap allocations per set, steady state", unit: "allocations per set",
    columns: allColumns)
  let sets = configuration.smoke ? 2 : 10_000
  table.add(
    "`[.new]`, N = 100",
    allocationsPerSet(fanOutContenders(observers: 100, oldAndNew: false), sets: sets))
  table.add(
    "`[.old, .new]`, N = 100",
    allocationsPerSet(fanOutContenders(observers: 100, oldAndNew: true), sets: sets))
  record("allocations", table)
}

do {
  let count =
    configuration.smoke
    ? 100 : Int(getenv("BENCHMARK_BYTES_COUNT").flatMap { Int(String(cString: $0)) } ?? 100_000)
  var table = Table(
    title: "Heap bytes per registered observer", unit: "bytes", columns: allColumns)
  table.add("N = \(count)", bytesPerObserver(count: count))
  record("bytes", table)
}

do {
  let count = configuration.smoke ? 10 : 5_000
  let columns = [Column.floor, Column.combine, Column.owner, Column.ownerBeside, Column.token]
  let start = now()
  let costs = registrationCosts(count: count, repetitions: configuration.smoke ? 1 : 3)
  progress("registration: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
  var table = Table(
    title: "Registering \(count) observers, then releasing them and setting once",
    unit: "ns per observer", columns: columns)
  table.add("register", costs.register)
  table.add("release + one set", costs.release)
  record("registration", table)
}

// MARK: - Report

print("# PropertyObservation benchmarks\n")
print(machineDescription())
if configuration.smoke { print("\n**Smoke run**: tiny counts, the numbers mean nothing.") }
if mc_is_active() == 0 { print("\n(The malloc interposer is inactive here: counts read 0.)") }
for key in order {
  print("\n" + tables[key]!.render())
}
print("\n" + targetsReport(tables).render())
print(
  "\n\(configuration.repetitions) interleaved repetitions per column, median; "
    + "run took \(format(Double(now() - started) / 1e9, fractionDigits: 1)) s; "
    + "checksum \(consumed).")

if !failures.isEmpty {
  print("\nFAILED:")
  for failure in failures { print("- \(failure)") }
  exit(1)
}
