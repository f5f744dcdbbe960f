import Dispatch
import OpenCombine
import OpenCombineDispatch
import PropertyObservation

/// Counts what arrives on the main queue and signals when the last value has arrived.
final class MainQueueCounter: @unchecked Sendable {
  // Touched only on the main queue, then read after `finished` was signalled.
  private(set) var delivered = 0
  private(set) var total = 0
  private let last: Int
  private let finished = DispatchSemaphore(value: 0)

  init(last: Int) {
    self.last = last
  }

  func receive(_ value: Int) {
    delivered += 1
    total &+= value
    if value == last { finished.signal() }
  }

  /// Waits for the last value; false if it has not arrived within a minute (a lost value).
  func wait() -> Bool {
    finished.wait(timeout: .now() + 60) == .success
  }
}

/// One column of the main-queue rows: `subscribe` registers a counter and returns what keeps the
/// subscription alive and how to read its hop count.
struct MainQueueContender {
  let column: String
  let usesSubject: Bool
  let subscribe:
    (_ source: Observable<Int>, _ subject: CurrentValueSubject<Int, Never>, MainQueueCounter) ->
      (keepAlive: Any, hops: () -> Int?)
}

/// `count` sets on a background thread (this one) delivered to the main queue, which the main
/// thread runs (`dispatchMain()`): the time from the first set until the last value arrived on
/// the main queue, in nanoseconds per set, the number of main-queue hops and the number of values
/// delivered. Median of `repetitions` interleaved runs.
///
/// The main-actor columns register from `@MainActor` code, so the library delivers on the main
/// queue itself; their hops are the main-queue turns in which the callback ran (`MainQueueTurns`).
/// `only` names one column to run alone (for a profiler).
func mainQueueDelivery(count: Int, repetitions: Int, only: String? = nil) -> (
  nanosecondsPerSet: [String: Double], hops: [String: Double], delivered: [String: Double]
) {
  let contenders = [
    MainQueueContender(column: Column.mainAsync, usesSubject: false) { source, _, counter in
      // The hand-written floor: one main-queue hop per value.
      let hops = HopCounter()
      let token = source.observe(options: [.initial, .new]) { value, _ in
        hops.count += 1
        DispatchQueue.main.async { counter.receive(value) }
      }
      return (token, { hops.count })
    },
    MainQueueContender(column: Column.combineReceiveOn, usesSubject: true) { _, subject, counter in
      // `receive(on:)` schedules every value on its own, so hops equal values delivered.
      let cancellable = subject.receive(on: DispatchQueue.main.ocombine).sink { value in
        counter.receive(value)
      }
      return (cancellable, { nil })
    },
    MainQueueContender(column: Column.driverEvery, usesSubject: false) { source, _, counter in
      let driver = source.asDriver(policy: .everyValue)
      let token = driver.drive { value in counter.receive(value) }
      return ((driver, token), { driver.mainQueueHopCount })
    },
    MainQueueContender(column: Column.driverCoalescing, usesSubject: false) {
      source, _, counter in
      let driver = source.asDriver(policy: .coalescing)
      let token = driver.drive { value in counter.receive(value) }
      return ((driver, token), { driver.mainQueueHopCount })
    },
    MainQueueContender(column: Column.mainActorObserve, usesSubject: false) {
      source, _, counter in
      // Registered from the main actor: the library hops to the main queue itself.
      let turns = MainQueueTurns()
      let token = onMainQueue { observeOnMainActor(source, counter, turns) }
      return (token, { turns.count })
    },
    MainQueueContender(column: Column.mainActorOwner, usesSubject: false) {
      source, _, counter in
      let turns = MainQueueTurns()
      nonisolated(unsafe) let owner = Owner()
      onMainQueue { addObserverOnMainActor(source, owner, counter, turns) }
      return (owner, { turns.count })
    },
  ]

  var times: [String: [Double]] = [:]
  var hopCounts: [String: [Double]] = [:]
  var deliveredCounts: [String: [Double]] = [:]
  for _ in 0..<repetitions {
    for contender in contenders where only == nil || contender.column == only {
      let source = Observable(0)
      let subject = CurrentValueSubject<Int, Never>(0)
      let counter = MainQueueCounter(last: count)
      let (keepAlive, hops) = contender.subscribe(source, subject, counter)
      // Let the subscription's initial value arrive first, so that it does not count.
      drainMainQueue()
      let deliveredBefore = counter.delivered
      let hopsBefore = hops() ?? deliveredBefore
      let start = now()
      if contender.usesSubject {
        for value in 1...count { subject.send(value) }
      } else {
        for value in 1...count { source.value = value }
      }
      if !counter.wait() {
        failures.append("\(contender.column): the last of \(count) values never arrived")
      }
      let elapsed = Double(now() - start)
      drainMainQueue()
      withExtendedLifetime(keepAlive) {}
      consume(counter.total)
      times[contender.column, default: []].append(elapsed / Double(count))
      let delivered = counter.delivered - deliveredBefore
      deliveredCounts[contender.column, default: []].append(Double(delivered))
      hopCounts[contender.column, default: []].append(
        Double((hops() ?? counter.delivered) - hopsBefore))
    }
  }
  return (times.mapValues(median), hopCounts.mapValues(median), deliveredCounts.mapValues(median))
}

final class HopCounter: @unchecked Sendable {
  // Incremented by the delivering thread only.
  var count = 0
}

/// Waits until everything queued on the main queue so far has run.
func drainMainQueue() {
  let done = DispatchSemaphore(value: 0)
  DispatchQueue.main.async { done.signal() }
  done.wait()
}
