import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// Runs every workload and prints Markdown tables, then the targets as ratios from this
// one run. `--smoke` runs every workload once with tiny counts (for CI: no timing meaning, but it
// fails if a column delivers different values than the others).
//
// The workloads run on a background thread while the main thread runs the main queue, which the
// Driver rows deliver to.

let arguments = Array(CommandLine.arguments.dropFirst())
if let index = arguments.firstIndex(of: "--profile") {
  let values = Array(arguments[(index + 1)...])
  let mainQueueWorkloads: Set = ["mainthread", "contended", "propagation", "mainqueue", "backlog"]
  if let workload = values.first, mainQueueWorkloads.contains(workload) {
    // Sets on the main queue need the main thread to run it (for perf, not valgrind; the
    // contended producer sets there too, the propagation scale table registers there, and the
    // main-queue and backlog rows deliver there).
    DispatchQueue.global().async { exit(profile(values)) }
    dispatchMain()
  }
  // On this thread, with no other thread started: valgrind cannot follow the thread switch.
  exit(profile(values))
}
DispatchQueue.global().async {
  exit(runBenchmarks(arguments: arguments))
}
dispatchMain()
