import Dispatch
import MallocCounter
import PropertyObservation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What one flood (issue 40, item 6) reports.
struct FloodResult {
  /// Nanoseconds each set of `x` spent inside its set call, per setter.
  var plainWaits: [Double] = []
  var mainWaits: [Double] = []
  /// For each setter's change of `x`, how many of B's changes made after that set began were
  /// delivered to `x`'s observer before it.
  var plainLater: [Double] = []
  var mainLater: [Double] = []
  /// Setters' changes that never reached `x`'s observer.
  var undelivered = 0
  /// B's sets of `y`, and the changes of `x` they made that reached `x`'s observer.
  var floodSets = 0
  var floodDelivered = 0
  /// Nanoseconds from the end of the flood until a last set of `x` reached both observers.
  var drain = 0.0
  /// Whether that last set reached both observers within two minutes.
  var settled = false
  /// Resident set size at the start and its high-water mark during the flood, in bytes.
  var startResident = 0.0
  var peakResident = 0.0
}

/// The flood of issue 40, item 6: thread B sets `y` for `duration` nanoseconds and `y`'s
/// callback sets `x`. Meanwhile a plain thread and the main queue (`x` has a main-actor
/// observer) each set `x` every `interval` nanoseconds (sleeping in between), timing each set
/// call. `x` also has a nonisolated token observer, which sees B's changes as 1, 2, 3, ... and
/// the setters' as negative numbers, and counts, for each setter's change, B's changes made after
/// that set began (`y.value` then) that it receives first. Once B stops and both setters have
/// stopped, this thread sets a last value and waits until both observers have it.
///
/// Memory is the resident set's high-water mark, reset at the start (after `malloc_trim`, so
/// that memory an earlier flood freed but kept does not hide this one's growth).
func flood(duration: UInt64, interval: UInt64 = 10_000_000) -> FloodResult {
  var result = FloodResult()
  let x = Observable(0)
  let y = Observable(0)
  let ledger = FloodLedger()
  let calls = MainActorCalls()
  let xToken = x.observe { @Sendable value, _ in ledger.receive(value) }
  let mainToken = onMainQueue { observeFloodOnMainActor(x, calls) }
  let yToken = y.observe { @Sendable value, _ in x.value = value }

  mc_trim()
  resetPeakResident()
  result.startResident = Double(residentSetBytes().current)

  let stop = StopFlag()
  let plain = FloodThread {
    var waits: [Double] = []
    var count = 0
    while !stop.isSet {
      count += 1
      waits.append(timedSet(x, to: -(2 * count - 1), since: y, ledger: ledger))
      usleep(UInt32(interval / 1000))
    }
    return waits
  }
  let mainSetter = MainQueueSetter(x: x, y: y, ledger: ledger, stop: stop, interval: interval)
  DispatchQueue.main.async { MainActor.assumeIsolated { mainSetter.run() } }

  // B: this thread.
  let start = now()
  var value = 0
  while true {
    for _ in 0..<64 {
      value += 1
      y.value = value
    }
    if now() - start >= duration { break }
  }
  let floodEnd = now()
  result.floodSets = value
  stop.set()
  result.plainWaits = plain.join()
  if mainSetter.stopped.wait(timeout: .now() + 120) != .success {
    failures.append("flood: the main queue's setter did not stop within two minutes")
  }
  x.value = FloodLedger.last
  result.settled =
    ledger.settled.wait(timeout: .now() + 120) == .success
    && calls.settled.wait(timeout: .now() + 120) == .success
  result.drain = Double(now() - floodEnd)
  if !result.settled {
    failures.append("flood: the last set of x did not reach both observers within two minutes")
  }
  drainMainQueue()
  result.peakResident = Double(residentSetBytes().peak)

  result.mainWaits = mainSetter.waits
  let counts = ledger.counts()
  result.floodDelivered = counts.floodDelivered
  result.undelivered = counts.pending
  for (marker, later) in counts.later {
    if marker % 2 != 0 {
      result.plainLater.append(Double(later))
    } else {
      result.mainLater.append(Double(later))
    }
  }
  withExtendedLifetime((xToken, mainToken, yToken)) {}
  consume(calls.count)
  return result
}

/// The flood row's columns and rows, shared by the table and the target checks.
enum FloodRow {
  static let plain = "plain setter (own thread)"
  static let main = "main-queue setter"
  static let flood = "whole flood"
  static let worstWait = "worst time in the set call, ms"
  static let medianWait = "median time in the set call, ms"
  static let sets = "sets of `x`"
  static let worstLater = "B's later changes delivered before the setter's, worst"
  static let medianLater = "B's later changes delivered before the setter's, median"
  static let undelivered = "setters' changes never delivered"
  static let floodSets = "B's sets of `y`, median"
  static let drain = "backlog drained after the flood ended, worst, s"
  static let settled = "last set reached both observers in every flood (1 = yes)"
  static let growth = "peak resident set growth, worst, MiB"
  static let perChange = "peak resident set growth per change of B, worst, bytes"
}

/// `runs` floods of `duration` nanoseconds, as one table: each setter's waits over all floods,
/// and the worst flood's memory and drain.
func floodTable(duration: UInt64, runs: Int) -> Table {
  let results = (0..<runs).map { run in
    let start = now()
    let result = flood(duration: duration)
    progress("flood \(run): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    return result
  }
  let milliseconds = format(Double(duration) / 1e6, fractionDigits: 0)
  var table = Table(
    title: "Flood (issue 40): thread B sets `y` for \(milliseconds) ms and `y`'s callback sets "
      + "`x`; a plain thread and the main queue (`x` has a main-actor observer) each set `x` "
      + "every 10 ms", unit: runs == 1 ? "one flood" : "\(runs) floods",
    columns: [FloodRow.plain, FloodRow.main, FloodRow.flood])
  let plainWaits = results.flatMap(\.plainWaits)
  let mainWaits = results.flatMap(\.mainWaits)
  let plainLater = results.flatMap(\.plainLater)
  let mainLater = results.flatMap(\.mainLater)
  table.add(
    FloodRow.worstWait,
    [
      FloodRow.plain: (plainWaits.max() ?? .nan) / 1e6,
      FloodRow.main: (mainWaits.max() ?? .nan) / 1e6,
    ])
  table.add(
    FloodRow.medianWait,
    [FloodRow.plain: median(plainWaits) / 1e6, FloodRow.main: median(mainWaits) / 1e6])
  table.add(
    FloodRow.sets,
    [FloodRow.plain: Double(plainWaits.count), FloodRow.main: Double(mainWaits.count)])
  table.add(
    FloodRow.worstLater,
    [FloodRow.plain: plainLater.max() ?? .nan, FloodRow.main: mainLater.max() ?? .nan])
  table.add(
    FloodRow.medianLater, [FloodRow.plain: median(plainLater), FloodRow.main: median(mainLater)])
  table.add(
    FloodRow.undelivered, [FloodRow.flood: Double(results.map(\.undelivered).reduce(0, +))])
  table.add(FloodRow.floodSets, [FloodRow.flood: median(results.map { Double($0.floodSets) })])
  table.add(FloodRow.drain, [FloodRow.flood: (results.map(\.drain).max() ?? .nan) / 1e9])
  table.add(FloodRow.settled, [FloodRow.flood: results.allSatisfy(\.settled) ? 1 : 0])
  let growths = results.map { max(0, $0.peakResident - $0.startResident) }
  table.add(FloodRow.growth, [FloodRow.flood: (growths.max() ?? .nan) / (1024 * 1024)])
  table.add(
    FloodRow.perChange,
    [
      FloodRow.flood: zip(growths, results).map { $0 / Double(max(1, $1.floodSets)) }.max()
        ?? .nan
    ])
  return table
}

/// Sets `x` to `marker` (negative) and returns the nanoseconds spent in the set call; first
/// tells `ledger` the latest change B had made (`y`'s value).
private func timedSet(
  _ x: Observable<Int>, to marker: Int, since y: Observable<Int>, ledger: FloodLedger
) -> Double {
  ledger.begin(marker, since: y.value)
  let start = now()
  x.value = marker
  return Double(now() - start)
}

/// What `x`'s token observer saw: B's changes (positive), the setters' (negative) and how many
/// of B's later changes came before each of those.
private final class FloodLedger: @unchecked Sendable {
  static let last = Int.max

  private let lock = SmallLock()
  private var pending: [(marker: Int, since: Int, later: Int)] = []
  private var later: [Int: Int] = [:]
  private var floodDelivered = 0
  let settled = DispatchSemaphore(value: 0)

  func begin(_ marker: Int, since: Int) {
    lock.withLock { pending.append((marker, since, 0)) }
  }

  func receive(_ value: Int) {
    guard value != Self.last else {
      settled.signal()
      return
    }
    lock.withLock {
      if value > 0 {
        floodDelivered += 1
        for index in pending.indices where pending[index].since < value {
          pending[index].later += 1
        }
      } else if let index = pending.firstIndex(where: { $0.marker == value }) {
        later[value] = pending[index].later
        pending.remove(at: index)
      }
    }
  }

  func counts() -> (floodDelivered: Int, pending: Int, later: [Int: Int]) {
    lock.withLock { (floodDelivered, pending.count, later) }
  }
}

/// Counts the main-actor observer's calls and signals at the last value.
private final class MainActorCalls: @unchecked Sendable {
  // Touched on the main queue only; read after `settled` was signalled and the queue drained.
  var count = 0
  let settled = DispatchSemaphore(value: 0)

  func receive(_ value: Int) {
    count += 1
    if value == FloodLedger.last { settled.signal() }
  }
}

@MainActor
private func observeFloodOnMainActor(_ x: Observable<Int>, _ calls: MainActorCalls)
  -> ObservationToken
{
  x.observe { value, _ in calls.receive(value) }
}

/// The main queue's setter: every `interval` nanoseconds (a chained `asyncAfter`) it sets `x`
/// once, timing the call, until `stop` is set.
private final class MainQueueSetter: @unchecked Sendable {
  // Touched on the main queue only; `waits` is read after `stopped` was signalled.
  private let x: Observable<Int>
  private let y: Observable<Int>
  private let ledger: FloodLedger
  private let stop: StopFlag
  private let interval: UInt64
  private var count = 0
  var waits: [Double] = []
  let stopped = DispatchSemaphore(value: 0)

  init(
    x: Observable<Int>, y: Observable<Int>, ledger: FloodLedger, stop: StopFlag, interval: UInt64
  ) {
    self.x = x
    self.y = y
    self.ledger = ledger
    self.stop = stop
    self.interval = interval
  }

  @MainActor
  func run() {
    guard !stop.isSet else {
      stopped.signal()
      return
    }
    count += 1
    waits.append(timedSet(x, to: -2 * count, since: y, ledger: ledger))
    DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(interval))) {
      MainActor.assumeIsolated { self.run() }
    }
  }
}

private final class StopFlag: @unchecked Sendable {
  private let lock = SmallLock()
  private var storage = false
  var isSet: Bool { lock.withLock { storage } }
  func set() { lock.withLock { storage = true } }
}

/// A thread of its own (not a global dispatch queue, which on Linux gets a new thread only about
/// once a second when the cores are taken) running `body`; `join` returns its result.
private final class FloodThread: @unchecked Sendable {
  private let body: () -> [Double]
  private var result: [Double] = []
  #if canImport(Darwin)
    private var thread: pthread_t?
  #else
    private var thread = pthread_t()
  #endif

  init(_ body: @escaping @Sendable () -> [Double]) {
    self.body = body
    let status = pthread_create(
      &thread, nil,
      { raw in
        #if canImport(Darwin)
          let job = Unmanaged<FloodThread>.fromOpaque(raw).takeRetainedValue()
        #else
          let job = Unmanaged<FloodThread>.fromOpaque(raw!).takeRetainedValue()
        #endif
        job.result = job.body()
        return nil
      }, Unmanaged.passRetained(self).toOpaque())
    precondition(status == 0, "pthread_create failed with \(status)")
  }

  func join() -> [Double] {
    #if canImport(Darwin)
      pthread_join(thread!, nil)
    #else
      pthread_join(thread, nil)
    #endif
    return result
  }
}
