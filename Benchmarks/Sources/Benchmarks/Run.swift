import MallocCounter

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Runs the benchmarks selected by `arguments` and prints the report; returns the exit status.
func runBenchmarks(arguments: [String]) -> Int32 {
  var configuration =
    arguments.contains("--smoke") ? RunConfiguration.smokeRun : RunConfiguration()
  if let index = arguments.firstIndex(of: "--repetitions"), index + 1 < arguments.endIndex,
    let repetitions = Int(arguments[index + 1])
  {
    configuration.repetitions = max(1, repetitions)
  }

  // The flood row (issue 40): its duration in milliseconds (400) and its number of floods (3).
  var floodDuration: UInt64 = configuration.smoke ? 50_000_000 : 400_000_000
  if let index = arguments.firstIndex(of: "--flood-ms"), index + 1 < arguments.endIndex,
    let milliseconds = UInt64(arguments[index + 1])
  {
    floodDuration = max(1, milliseconds) * 1_000_000
  }
  var floodRuns = configuration.smoke ? 1 : 3
  if let index = arguments.firstIndex(of: "--flood-runs"), index + 1 < arguments.endIndex,
    let runs = Int(arguments[index + 1])
  {
    floodRuns = max(1, runs)
  }

  if arguments.contains("--flood") {
    // The flood row alone (issue 40), with its targets.
    let table = floodTable(duration: floodDuration, runs: floodRuns)
    var report = TargetsReport()
    addFloodTargets(table, to: &report)
    print(table.render() + "\n\n" + report.render())
    return failures.isEmpty ? 0 : 1
  }

  if arguments.contains("--edits") {
    // The element edits alone (issue 43), with their target.
    let table = editsTable(smoke: configuration.smoke, repetitions: configuration.repetitions)
    var report = TargetsReport()
    addEditsTargets(table, to: &report)
    print(table.render() + "\n\n" + report.render())
    return 0
  }

  if arguments.contains("--collections") {
    // The collections rows alone (issue 29), with their targets.
    let table = collectionsTable(smoke: configuration.smoke)
    var report = TargetsReport()
    addCollectionsTargets(table, to: &report)
    print(table.render() + "\n\n" + report.render())
    return 0
  }

  let started = now()
  let allColumns = [Column.closures, Column.floor, Column.combine, Column.owner, Column.token]
  var tables: [String: Table] = [:]
  var order: [String] = []

  func record(_ key: String, _ table: Table) {
    tables[key] = table
    order.append(key)
  }

  func run(_ name: String, _ contenders: [Contender], workPerIteration: Int? = nil) -> [String:
    Double]
  {
    let start = now()
    let values = measure(
      contenders, workPerIteration: workPerIteration, configuration: configuration)
    progress("\(name): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    expectSameChecksums(contenders, in: name)
    for contender in contenders { consume(contender.checksum()) }
    return values
  }

  do {
    var table = Table(
      title: "Fan-out, `[.new]`", unit: "ns per delivered notification",
      columns: allColumns + [Column.appleObservation])
    for count in [1, 10, 100, 1000] {
      table.add(
        "N = \(count)",
        run("fan-out N = \(count)", fanOutContenders(observers: count, oldAndNew: false)))
    }
    record("fanOut", table)
  }

  do {
    var table = Table(
      title: "Fan-out, `[.old, .new]`", unit: "ns per delivered call, two per observer and set",
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
    table.add(
      "100 permanent", run("churn", churnContenders(permanent: 100), workPerIteration: 101))
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
      title: "Eight threads setting one observable", unit: "ns per delivered notification",
      columns: [Column.lockedFloor, Column.combine, Column.owner, Column.token])
    table.add(
      "N = 10", run("eight threads", concurrencyContenders(threads: 8, observers: 10)))
    record("eightThreads", table)
  }

  do {
    var table = Table(
      title: "Main-thread sets: main-actor vs nonisolated observers",
      unit: "ns per delivered notification",
      columns: [
        Column.nonisolatedToken, Column.mainActorObserve, Column.nonisolatedOwner,
        Column.mainActorOwner,
      ])
    table.add("N = 100", run("main thread N = 100", mainThreadContenders(observers: 100)))
    record("mainThread", table)
  }

  do {
    var table = Table(
      title: "Bindings", unit: "ns per source set",
      columns: [
        Column.handWritten, Column.handWrittenKeyPath, Column.libraryBinding, Column.combine,
      ])
    table.add(
      "map → removeDuplicates → bind(to:)",
      run("derived chain", derivedChainContenders(), workPerIteration: 4))
    table.add(
      "bind(to: target, \\.value)",
      run("key-path binding", keyPathBindingContenders(), workPerIteration: 2))
    table.add(
      "flatMapLatest → bind(to:), selected source set",
      run("flatMapLatest", flatMapLatestContenders(), workPerIteration: 2))
    table.add(
      "combineLatest([4 sources]) → map → bind(to:)",
      run("combineLatest array", combineLatestArrayContenders(), workPerIteration: 4))
    record("bindings", table)
  }

  do {
    var table = Table(
      title: "Transactions: two sources, one `combineLatest(_:).map` token observer",
      unit: "per update of both sources", columns: [Column.plainSets, Column.transaction])
    table.add(
      "ns per update", run("transactions", transactionContenders(), workPerIteration: 10))
    table.add(
      "derived observer calls per update",
      transactionCallsPerUpdate(updates: configuration.smoke ? 10 : 1000))
    record("transactions", table)
  }

  do {
    let count = configuration.smoke ? 10 : 100_000
    let columns = [
      Column.mainAsync, Column.combineReceiveOn, Column.driverEvery, Column.driverCoalescing,
      Column.mainActorObserve, Column.mainActorOwner,
    ]
    let start = now()
    let result = mainQueueDelivery(
      count: count, repetitions: configuration.smoke ? 1 : 5)
    progress("main queue: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    var table = Table(
      title: "\(count) background sets delivered to the main queue", unit: "medians",
      columns: columns)
    table.add("ns per set, until the last value arrived", result.nanosecondsPerSet)
    table.add("main-queue hops", result.hops)
    table.add("values delivered", result.delivered)
    table.add("main-queue hops per value set", result.hops.mapValues { $0 / Double(count) })
    record("mainQueue", table)
  }

  do {
    let count = configuration.smoke ? 1000 : 1_000_000
    let runs = configuration.smoke ? 1 : 3
    let start = now()
    let results = (0..<runs).map { _ in driverBacklog(count: count) }
    let idleDuration: UInt64 = configuration.smoke ? 10_000_000 : 1_000_000_000
    let idle = idleHeartbeatGap(duration: idleDuration)
    progress("Driver backlog: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    let gaps = results.map { $0.longestHeartbeatGap / 1e6 }
    var table = Table(
      title: "Driver .everyValue fed \(count) values from a background thread, 2 ms main-queue "
        + "heartbeat", unit: runs == 1 ? "one run" : "\(runs) runs", columns: ["measured"])
    table.add("longest gap between heartbeats, worst run, ms", ["measured": gaps.max() ?? .nan])
    table.add("longest gap between heartbeats, median run, ms", ["measured": median(gaps)])
    table.add(
      "longest gap between heartbeats with no producer (\(Double(idleDuration) / 1e9) s), ms",
      ["measured": idle / 1e6])
    table.add(
      "values delivered, every run", ["measured": Double(results.map(\.delivered).min() ?? 0)])
    table.add(
      "all delivered in order in every run (1 = yes)",
      ["measured": results.allSatisfy(\.inOrder) ? 1 : 0])
    table.add("main-queue hops, median", ["measured": median(results.map { Double($0.hops) })])
    table.add(
      "ns per set, until the last value arrived, median",
      ["measured": median(results.map(\.nanosecondsPerSet))])
    record("driverBacklog", table)
  }

  do {
    let duration: UInt64 = configuration.smoke ? 50_000_000 : 1_500_000_000
    let start = now()
    let result = contendedProducer(duration: duration)
    progress("contended producer: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    let mebibyte = 1024.0 * 1024.0
    var table = Table(
      title: "Contended producer: ten working observers for \(Double(duration) / 1e9) s, the "
        + "main thread setting, binding and registering `.initial` every 200 µs",
      unit: "one run", columns: ["measured"])
    table.add("worst main-thread call, ms", ["measured": result.worstMainCall / 1e6])
    table.add("main-thread calls", ["measured": Double(result.mainCalls)])
    table.add("producer sets", ["measured": Double(result.producerSets)])
    table.add("producer finished (1 = yes)", ["measured": result.producerFinished ? 1 : 0])
    table.add(
      "binding ends on the producer's last value (1 = yes)",
      ["measured": result.bindingEndsOnLastValue ? 1 : 0])
    table.add("resident set at the start, MiB", ["measured": result.startResident / mebibyte])
    table.add(
      "peak resident set (VmHWM, reset at the start), MiB",
      ["measured": result.peakResident / mebibyte])
    record("contended", table)
  }

  do {
    let start = now()
    record("flood", floodTable(duration: floodDuration, runs: floodRuns))
    progress("flood: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
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
    var table = Table(
      title: "Heap allocations per set, bindings", unit: "allocations per source set",
      columns: [
        Column.handWritten, Column.handWrittenKeyPath, Column.libraryBinding, Column.combine,
      ])
    let sets = configuration.smoke ? 2 : 10_000
    table.add(
      "map → removeDuplicates → bind(to:)", allocationsPerSet(derivedChainContenders(), sets: sets))
    table.add(
      "bind(to: target, \\.value)", allocationsPerSet(keyPathBindingContenders(), sets: sets))
    table.add(
      "map → removeDuplicates → bind(to:), property without didSet",
      allocationsPerSet(storedPropertyChainContenders(), sets: sets))
    record("bindingAllocations", table)
  }

  do {
    let count = configuration.smoke ? 100 : 100_000
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

  do {
    let counts = configuration.smoke ? [100, 1000] : [10_000, 100_000]
    let columns = counts.map { "n = \($0)" }
    var byOperation: [String: [String: Double]] = [:]
    for (count, column) in zip(counts, columns) {
      let start = now()
      let costs = registrationAtScale(
        count: count, sampled: configuration.smoke ? 10 : 1000,
        repetitions: configuration.smoke ? 1 : 5, budget: 20)
      progress(
        "registration at scale, \(column): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s"
      )
      for (operation, value) in costs { byOperation[operation, default: [:]][column] = value }
    }
    var table = Table(
      title: "Registration at scale: one operation on a list of n registrations",
      unit: "ns per operation", columns: columns)
    for operation in ScaleOperation.all { table.add(operation, byOperation[operation] ?? [:]) }
    record("scale", table)
  }

  do {
    let counts = configuration.smoke ? [10, 100] : [1000, 10_000, 100_000]
    let columns = counts.map { "n = \(formatCount($0))" }
    var byDimension: [String: [String: Double]] = [:]
    for (count, column) in zip(counts, columns) {
      let start = now()
      let costs = propagationScale(
        count: count, repetitions: configuration.smoke ? 1 : 5, budget: 20,
        elementsPerSample: configuration.smoke ? 1 : 100_000)
      progress(
        "propagation at scale, \(column): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s"
      )
      for (dimension, value) in costs { byDimension[dimension, default: [:]][column] = value }
    }
    let ratioColumn = "\(formatCount(counts[counts.count - 1])) / \(formatCount(counts[0]))"
    var table = Table(
      title: "Scale: one operation with n elements", unit: "ns per element",
      columns: columns + [ratioColumn])
    for dimension in ScaleDimension.all {
      var values = byDimension[dimension] ?? [:]
      if let largest = values[columns[columns.count - 1]], let smallest = values[columns[0]],
        smallest > 0
      {
        values[ratioColumn] = largest / smallest
      }
      table.add(dimension, values)
    }
    record("propagationScale", table)
  }

  do {
    let counts = configuration.smoke ? [100, 1_000] : [10_000, 100_000]
    let columns = counts.map { "\(formatCount($0)) sets" }
    let ratioColumn = "\(formatCount(counts[1])) / \(formatCount(counts[0]))"
    var table = Table(
      title: "Registration churn beside a setter: another thread registers with `.initial` and "
        + "cancels in a loop", unit: "ns per set (median of 3)", columns: columns + [ratioColumn])
    let start = now()
    for (label, onDerived) in [
      ("churn on `a`, the observable set", false),
      ("churn on `m = a.map`, inside `a.combineLatest(m)`", true),
    ] {
      var values: [String: Double] = [:]
      for (count, column) in zip(counts, columns) {
        let samples = (0..<3).map { _ in churnBesideASetter(sets: count, onDerived: onDerived) }
        values[column] = samples.map(\.nanosecondsPerSet).sorted()[1]
      }
      values[ratioColumn] = values[columns[1]]! / values[columns[0]]!
      table.add(label, values)
    }
    progress("churn beside a setter: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    record("churnBesideASetter", table)
  }

  do {
    let start = now()
    let rows = configuration.smoke ? 100 : 200_000
    var table = Table(
      title: "Footprint: rows of five properties (a `map` level: per level), nobody observing "
        + "unless stated", unit: "heap bytes and ns to create, per property",
      columns: [Column.heapBytes, Column.creationTime])
    for (label, footprint) in footprintTable(
      rows: rows, repetitions: configuration.smoke ? 1 : 5)
    {
      table.add(
        label, [Column.heapBytes: footprint.bytes, Column.creationTime: footprint.nanoseconds])
    }
    progress("footprint: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    record("footprint", table)
  }

  do {
    let start = now()
    record("collections", collectionsTable(smoke: configuration.smoke))
    progress("collections: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
  }

  do {
    let start = now()
    record(
      "edits", editsTable(smoke: configuration.smoke, repetitions: configuration.repetitions))
    progress("edits: \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
  }

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

  guard failures.isEmpty else {
    print("\nFAILED:")
    for failure in failures { print("- \(failure)") }
    return 1
  }
  return 0
}

/// `--profile WORKLOAD COLUMN ITERATIONS` runs one column of one workload alone, for
/// `valgrind --tool=callgrind` (WORKLOAD: fanout-N, oldnew-N, churn, reentrant, chain, keypath,
/// register, mainthread: perf only);
/// with COLUMN `all` it times every column of the workload as the full run does (and `scale all
/// N` times the registration-at-scale row at n = N; `mainqueue all N` the row of N background
/// sets delivered to the main queue, `mainqueue COLUMN N` one column of it; `bytes all N` the heap
/// bytes per registered observer with N registrations; `backlog all N` the Driver backlog row with N values; `contended all N` runs the contended
/// producer N times; `propagation all N` times the propagation scale table's rows at n = N, and
/// `propagation TEXT N` those whose label contains TEXT).
func profile(_ values: [String]) -> Int32 {
  guard values.count >= 2 else {
    print("usage: benchmarks --profile WORKLOAD COLUMN [ITERATIONS]")
    return 2
  }
  let workload = values[0]
  let iterations = values.count > 2 ? Int(values[2]) ?? 100_000 : 100_000
  if workload == "contended" && values[1] == "all" {
    // The contended-producer row ITERATIONS times, for a stall that comes once in many runs.
    for run in 0..<iterations {
      let result = contendedProducer(duration: 1_500_000_000)
      let worst = format(result.worstMainCall / 1e6, fractionDigits: 2)
      print("run \(run): worst main-thread call \(worst) ms")
    }
    return 0
  }
  if workload == "footprint" {
    // The footprint table alone, over ITERATIONS rows of five properties (or chain levels):
    // every row, or those whose label contains COLUMN.
    let only = values[1] == "all" ? nil : values[1]
    for (label, footprint) in footprintTable(rows: iterations, repetitions: 5, only: only) {
      let bytes = format(footprint.bytes, fractionDigits: 1)
      let time = format(footprint.nanoseconds, fractionDigits: 1)
      print("\(label): \(bytes) bytes, \(time) ns to create")
    }
    return 0
  }
  if workload == "bytes" && values[1] == "all" {
    // The heap-bytes row alone, with ITERATIONS registrations per column: away from the rows
    // that run before it in the full run, whose threads may still be freeing memory.
    for (column, bytes) in bytesPerObserver(count: iterations).sorted(by: { $0.key < $1.key }) {
      print("\(column): \(format(bytes, fractionDigits: 1)) bytes per observer")
    }
    return 0
  }
  if workload == "mainqueue" {
    // The row of background sets delivered to the main queue, ITERATIONS sets, as the full run
    // times it: every column, or COLUMN alone.
    let result = mainQueueDelivery(
      count: iterations, repetitions: 5, only: values[1] == "all" ? nil : values[1])
    for (column, value) in result.nanosecondsPerSet.sorted(by: { $0.key < $1.key }) {
      let hops = Int(result.hops[column] ?? 0)
      let perSet = format(Double(hops) / Double(iterations), fractionDigits: 4)
      let delivered = Int(result.delivered[column] ?? 0)
      print(
        "\(column): \(format(value, fractionDigits: 1)) ns per set, \(hops) hops (\(perSet) "
          + "per set), \(delivered) delivered")
    }
    return failures.isEmpty ? 0 : 1
  }
  if workload == "backlog" && values[1] == "all" {
    // The Driver backlog row with ITERATIONS values, three runs as in the full run.
    for run in 0..<3 {
      let result = driverBacklog(count: iterations)
      let gap = format(result.longestHeartbeatGap / 1e6, fractionDigits: 2)
      let perSet = format(result.nanosecondsPerSet, fractionDigits: 1)
      print(
        "run \(run): longest heartbeat gap \(gap) ms, \(result.delivered) delivered, in order "
          + "\(result.inOrder), \(result.hops) hops, \(perSet) ns per set")
    }
    return failures.isEmpty ? 0 : 1
  }
  if workload == "scale" && values[1] == "all" {
    // The registration-at-scale row at n = ITERATIONS, as the full run times it: after a
    // discarded run, since the full run reaches this row with a heap that earlier rows grew (a
    // fresh process pays page faults for every new page, which inflated registration by 20 %).
    _ = registrationAtScale(count: iterations, sampled: 1000, repetitions: 1, budget: 20)
    let costs = registrationAtScale(count: iterations, sampled: 1000, repetitions: 5, budget: 20)
    for (operation, value) in costs.sorted(by: { $0.key < $1.key }) {
      print("\(operation): \(format(value, fractionDigits: 1))")
    }
    return 0
  }
  if workload == "propagation" {
    // The scale table's rows at n = ITERATIONS, as the full run times them: every row, or
    // those whose label contains COLUMN.
    let costs = propagationScale(
      count: iterations, repetitions: 5, budget: 20, only: values[1] == "all" ? nil : values[1])
    for dimension in ScaleDimension.all where costs[dimension] != nil {
      print("\(dimension): \(format(costs[dimension] ?? .nan, fractionDigits: 1))")
    }
    return 0
  }
  let contenders: [Contender]
  if workload.hasPrefix("fanout-"), let count = Int(workload.dropFirst(7)) {
    contenders = fanOutContenders(observers: count, oldAndNew: false)
  } else if workload.hasPrefix("oldnew-"), let count = Int(workload.dropFirst(7)) {
    contenders = fanOutContenders(observers: count, oldAndNew: true)
  } else if workload == "churn" {
    contenders = churnContenders(permanent: 100)
  } else if workload == "reentrant" {
    contenders = reentrancyContenders(observers: 10)
  } else if workload == "chain" {
    contenders = derivedChainContenders()
  } else if workload == "combine4" {
    contenders = combineLatestArrayContenders()
  } else if workload == "flatmap" {
    contenders = flatMapLatestContenders()
  } else if workload == "keypath" {
    contenders = keyPathBindingContenders()
  } else if workload == "mainthread" {
    contenders = mainThreadContenders(observers: 100)
  } else if workload == "register" {
    contenders = registrationContenders()
  } else if workload == "churn-beside" {
    // `churn-beside plain|derived|all SETS`: three runs of each form asked for.
    for onDerived in [false, true] where values[1] == "all" || (values[1] == "derived") == onDerived
    {
      for _ in 0..<3 {
        let result = churnBesideASetter(sets: iterations, onDerived: onDerived)
        print(
          "churn on \(onDerived ? "m" : "a"): \(format(result.nanosecondsPerSet, fractionDigits: 1)) ns per set, \(result.pairs) pairs"
        )
      }
    }
    return 0
  } else if workload.hasPrefix("threads-"), let count = Int(workload.dropFirst(8)) {
    contenders = concurrencyContenders(threads: count, observers: 10)
  } else {
    contenders = []
  }
  if values[1] == "all" {
    // Every column, timed as in the full run: for checking one row quickly.
    let medians = measure(contenders, workPerIteration: nil, configuration: RunConfiguration())
    for contender in contenders {
      print("\(contender.column): \(format(medians[contender.column] ?? .nan, fractionDigits: 1))")
    }
    return 0
  }
  guard let contender = contenders.first(where: { $0.column == values[1] }) else {
    print("unknown workload or column: \(values[0]) \(values[1])")
    return 2
  }
  contender.run(iterations)
  print("checksum \(contender.checksum())")
  return 0
}

/// `count` with a space between groups of three digits: "100 000".
func formatCount(_ count: Int) -> String {
  var digits = String(count)
  var groups: [String] = []
  while digits.count > 3 {
    groups.insert(String(digits.suffix(3)), at: 0)
    digits.removeLast(3)
  }
  groups.insert(digits, at: 0)
  return groups.joined(separator: " ")
}
