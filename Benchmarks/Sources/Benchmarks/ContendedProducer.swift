import Dispatch
import PropertyObservation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What the contended-producer row reports.
struct ContendedProducerResult {
  /// The longest single main-thread call (a set, a `bind(to:)` or an `.initial` registration),
  /// in nanoseconds.
  var worstMainCall = 0.0
  var mainCalls = 0
  var producerSets = 0
  var producerFinished = false
  var bindingEndsOnLastValue = false
  /// Resident set size when the row started and its high-water mark during the row, in bytes.
  var startResident = 0.0
  var peakResident = 0.0
}

/// The main thread's side of the contended producer: a tick every `interval` nanoseconds that
/// sets the source, binds it to another observable and registers an `.initial` observer,
/// timing each call.
private final class MainThreadWork: @unchecked Sendable {
  // Touched on the main queue only, except `stopRequested`, which is guarded by `lock`, and the
  // results, read after `stopped` was signalled.
  let source: Observable<Int>
  let target: Observable<Int>
  let interval: Int
  var worstCall: UInt64 = 0
  var calls = 0
  var seen = 0
  var tick = 0
  var token: ObservationToken?
  private var stopRequested = false
  private let lock = SmallLock()
  let stopped = DispatchSemaphore(value: 0)

  init(source: Observable<Int>, target: Observable<Int>, interval: Int) {
    self.source = source
    self.target = target
    self.interval = interval
  }

  func requestStop() {
    lock.withLock { stopRequested = true }
  }

  @MainActor
  func run() {
    if lock.withLock({ stopRequested }) {
      token = nil
      stopped.signal()
      return
    }
    tick += 1
    timed { source.value = -tick }
    timed { source.bind(to: target) }
    // The previous token is released in the same timed call.
    timed {
      token = source.observe(options: [.initial, .new]) { value, _ in self.seen &+= value }
    }
    DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(interval)) {
      MainActor.assumeIsolated { self.run() }
    }
  }

  @MainActor
  private func timed(_ body: () -> Void) {
    let start = now()
    body()
    worstCall = max(worstCall, now() - start)
    calls += 1
  }
}

/// A background producer setting a value in a loop for `duration` nanoseconds, with ten
/// observers that each set another observable, while the main thread, every 200 µs, sets the
/// same value, binds it to a target observable (`bind(to:)`) and registers a main-actor
/// observer with `[.initial, .new]` (replacing the previous one). After `duration` the main
/// thread's work stops, then the producer sets its last value, which the binding must end on.
func contendedProducer(duration: UInt64) -> ContendedProducerResult {
  var result = ContendedProducerResult()
  let source = Observable(0)
  let sinks = (0..<10).map { _ in Observable(0) }
  let tokens = sinks.map { sink in source.observe { @Sendable value, _ in sink.value = value } }
  let target = Observable(0)
  let work = MainThreadWork(source: source, target: target, interval: 200_000)
  let producerDone = DispatchSemaphore(value: 0)
  final class Producer: @unchecked Sendable {
    // Written by the producer, read after `producerDone` was signalled.
    var sets = 0
    var last = 0
  }
  let producer = Producer()

  resetPeakResident()
  result.startResident = Double(residentSetBytes().current)
  DispatchQueue.main.async { MainActor.assumeIsolated { work.run() } }
  DispatchQueue.global().async {
    let start = now()
    var value = 0
    while now() - start < duration {
      value += 1
      source.value = value
    }
    work.requestStop()
    _ = work.stopped.wait(timeout: .now() + 30)
    value += 1
    source.value = value
    producer.sets = value
    producer.last = value
    producerDone.signal()
  }
  result.producerFinished =
    producerDone.wait(timeout: .now() + .nanoseconds(Int(duration)) + 60) == .success
  if !result.producerFinished {
    // The producer consumes `stopped` when it finishes; without it, wait here.
    work.requestStop()
    _ = work.stopped.wait(timeout: .now() + 30)
    failures.append("contended producer: the producer did not finish within a minute")
  }
  drainMainQueue()
  result.peakResident = Double(residentSetBytes().peak)
  result.worstMainCall = Double(work.worstCall)
  result.mainCalls = work.calls
  result.producerSets = producer.sets
  result.bindingEndsOnLastValue = result.producerFinished && target.value == producer.last
  if result.producerFinished && !result.bindingEndsOnLastValue {
    failures.append(
      "contended producer: the binding ended on \(target.value), the producer's last was "
        + "\(producer.last)")
  }
  withExtendedLifetime(tokens) {}
  consume(work.seen &+ sinks.reduce(0) { $0 &+ $1.value })
  return result
}

/// What the Driver backlog row reports.
struct DriverBacklogResult {
  /// The longest gap between two runs of a 2 ms main-queue heartbeat, in nanoseconds.
  var longestHeartbeatGap = 0.0
  var delivered = 0
  var inOrder = false
  var hops = 0
  var nanosecondsPerSet = 0.0
}

/// A 2 ms heartbeat on the main queue that records the longest gap between two of its runs:
/// how long the main queue was held by something else.
private final class Heartbeat: @unchecked Sendable {
  // Touched on the main queue only; read after it was drained.
  var longestGap: UInt64 = 0
  private var last: UInt64 = 0
  private var stopRequested = false
  private let lock = SmallLock()

  func stop() {
    lock.withLock { stopRequested = true }
  }

  @MainActor
  func beat() {
    let time = now()
    if last != 0 { longestGap = max(longestGap, time - last) }
    last = time
    guard !lock.withLock({ stopRequested }) else { return }
    DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(2)) {
      MainActor.assumeIsolated { self.beat() }
    }
  }
}

/// Checks that a Driver delivers 1, 2, 3, ... in order, and signals at the last value.
private final class OrderCheck: @unchecked Sendable {
  // Touched on the main queue only; read after `finished` was signalled.
  var delivered = 0
  var inOrder = true
  private var previous = 0
  private let last: Int
  let finished = DispatchSemaphore(value: 0)

  init(last: Int) {
    self.last = last
  }

  func receive(_ value: Int) {
    guard value != 0 else { return }  // the initial value
    delivered += 1
    if value != previous + 1 { inOrder = false }
    previous = value
    if value == last { finished.signal() }
  }
}

/// A `Driver` with `.everyValue` fed `count` values from this (background) thread while a 2 ms
/// heartbeat runs on the main queue: the longest main-queue turn shows as the longest gap
/// between heartbeats.
func driverBacklog(count: Int) -> DriverBacklogResult {
  var result = DriverBacklogResult()
  let source = Observable(0)
  let driver = source.asDriver(policy: .everyValue)
  let check = OrderCheck(last: count)
  let token = driver.drive { value in check.receive(value) }
  drainMainQueue()
  let heartbeat = Heartbeat()
  DispatchQueue.main.async { MainActor.assumeIsolated { heartbeat.beat() } }
  // Let the heartbeat settle before the producer starts.
  usleep(20_000)
  let hopsBefore = driver.mainQueueHopCount
  let start = now()
  for value in 1...count { source.value = value }
  if check.finished.wait(timeout: .now() + 120) != .success {
    failures.append("Driver backlog: the last of \(count) values never arrived")
  }
  result.nanosecondsPerSet = Double(now() - start) / Double(count)
  heartbeat.stop()
  drainMainQueue()
  usleep(5_000)
  drainMainQueue()
  result.longestHeartbeatGap = Double(heartbeat.longestGap)
  result.delivered = check.delivered
  result.inOrder = check.inOrder && check.delivered == count
  result.hops = driver.mainQueueHopCount - hopsBefore
  if !result.inOrder {
    failures.append(
      "Driver backlog: \(check.delivered) of \(count) values, in order: \(check.inOrder)")
  }
  withExtendedLifetime((driver, token)) {}
  return result
}

/// The longest gap between runs of the 2 ms main-queue heartbeat over `duration` nanoseconds
/// with nothing else running: the measurement's own floor (timer latency, the machine's other
/// work).
func idleHeartbeatGap(duration: UInt64) -> Double {
  let heartbeat = Heartbeat()
  DispatchQueue.main.async { MainActor.assumeIsolated { heartbeat.beat() } }
  usleep(UInt32(duration / 1000))
  heartbeat.stop()
  drainMainQueue()
  usleep(5_000)
  drainMainQueue()
  return Double(heartbeat.longestGap)
}

/// Resets the resident set's high-water mark (VmHWM) to the current resident set size, so that
/// the next `residentSetBytes().peak` covers only what follows (Linux ≥ 4.0).
func resetPeakResident() {
  guard let file = fopen("/proc/self/clear_refs", "w") else { return }
  fputs("5", file)
  fclose(file)
}

/// The resident set size (VmRSS) and its high-water mark (VmHWM) from `/proc/self/status`, in
/// bytes; 0 where that file does not exist.
func residentSetBytes() -> (current: Int, peak: Int) {
  guard let file = fopen("/proc/self/status", "r") else { return (0, 0) }
  defer { fclose(file) }
  var current = 0
  var peak = 0
  var buffer = [CChar](repeating: 0, count: 256)
  while fgets(&buffer, Int32(buffer.count), file) != nil {
    let line = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let kilobytes = Int(line.filter(\.isNumber)) ?? 0
    if line.hasPrefix("VmRSS:") { current = kilobytes * 1024 }
    if line.hasPrefix("VmHWM:") { peak = kilobytes * 1024 }
  }
  return (current, peak)
}

/// A pthread mutex, for the small state the main queue and a background thread share here.
final class SmallLock: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func withLock<Result>(_ body: () -> Result) -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body()
  }
}
