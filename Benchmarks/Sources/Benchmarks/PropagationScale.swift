import Dispatch
import PropertyObservation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The rows of the scale table (issue 32): one per dimension along which an app can grow.
enum ScaleDimension {
  static let maps = "n `map` of one source: one set, per derived value"
  static let combineFanOut = "n `combineLatest` of one source: one set, per combined value"
  static let combineOfMany = "`combineLatest` of n sources: a transaction setting all, per source"
  static let transaction = "a transaction over n observables, one observer each: per observable"
  static let chain = "a chain of n `map`: one set, per level"
  static let chainHandWritten = "peer: a chain of n hand-written closure nodes: one call, per level"
  static let mainActorRegister = "n main-actor registrations: register, per registration"
  static let mainActorSet = "n main-actor registrations: one set on the main actor, per observer"
  static let deadOwners = "n dead owners: the set that prunes them, per owner"

  static let all = [
    maps, combineFanOut, combineOfMany, transaction, chain, chainHandWritten,
    mainActorRegister, mainActorSet, deadOwners,
  ]
}

/// The scale table: for each dimension, the cost of one operation in nanoseconds with `count`
/// elements, the median of up to `repetitions` samples (fewer when a dimension takes long: no
/// new sample starts after `budget` seconds).
///
/// Every fixture is built before its clock starts; what is timed is the operation of the row's
/// label, divided by the `count` elements it reaches. A design with a constant cost per element
/// reads the same at every `count` but for cache effects; one that scans per element grows
/// with `count`. A sample repeats the operation until it has reached about `elementsPerSample`
/// elements (a set through 1 000 derived values takes tens of microseconds, which one
/// preemption would double); operations that need a fresh fixture get one each time, untimed.
///
/// With `filter`, only the rows whose label contains it run (for a profiler).
///
/// The chain runs on a thread with a 512 MiB stack: a set through a chain propagates
/// recursively (issue 32, item 3), so a chain 100 000 deep overflows an 8 MiB stack. Building
/// and releasing it happen on that thread too (a release is recursive along the chain as well).
func propagationScale(
  count: Int, repetitions: Int, budget: Double, elementsPerSample: Int = 100_000,
  only filter: String? = nil
) -> [String: Double] {
  var samples: [String: [Double]] = [:]
  let accumulator = Accumulator()
  let rounds = max(1, elementsPerSample / count)

  /// Takes the samples of `dimension`: `body` runs `rounds` operations and returns the time
  /// they took in nanoseconds.
  func time(_ dimension: String, _ body: () -> UInt64) {
    if let filter, !dimension.contains(filter) { return }
    let started = now()
    for repetition in 0..<repetitions {
      if repetition > 0 && Double(now() - started) / 1e9 > budget { break }
      let elapsed = body()
      samples[dimension, default: []].append(Double(elapsed) / Double(rounds * count))
    }
  }

  /// Times `operation` run `rounds` times in a row.
  func timeRounds(_ operation: () -> Void) -> UInt64 {
    let start = now()
    for _ in 0..<rounds { operation() }
    return now() - start
  }

  time(ScaleDimension.maps) {
    let source = Observable(0)
    let derived = (0..<count).map { offset in source.map { $0 &+ offset } }
    defer { accumulator.total &+= derived[count - 1].value }
    return timeRounds { source.value &+= 1 }
  }

  time(ScaleDimension.combineFanOut) {
    let source = Observable(0)
    let other = Observable(1)
    let combined = (0..<count).map { _ in source.combineLatest(other) }
    defer { accumulator.total &+= combined[count - 1].value.0 }
    return timeRounds { source.value &+= 1 }
  }

  time(ScaleDimension.combineOfMany) {
    let sources = (0..<count).map { Observable($0) }
    let combined = combineLatest(sources)
    defer { accumulator.total &+= combined.value[count - 1] }
    return timeRounds {
      withObservationTransaction {
        for source in sources { source.value &+= 1 }
      }
    }
  }

  time(ScaleDimension.transaction) {
    let sources = (0..<count).map { Observable($0) }
    let tokens = sources.map { source in
      source.observe { value, _ in accumulator.total &+= value }
    }
    defer { withExtendedLifetime(tokens) {} }
    return timeRounds {
      withObservationTransaction {
        for source in sources { source.value &+= 1 }
      }
    }
  }

  time(ScaleDimension.chain) {
    onLargeStack {
      let source = Observable(0)
      var last: ReadOnlyObservable<Int> = source
      for _ in 0..<count { last = last.map { $0 &+ 1 } }
      let token = last.observe { value, _ in accumulator.total &+= value }
      defer { withExtendedLifetime(token) {} }
      return timeRounds { source.value &+= 1 }
    }
  }

  time(ScaleDimension.chainHandWritten) {
    onLargeStack {
      // Each level one heap object that holds the next and a transform: the least a chain of
      // separately allocated levels can touch.
      var head = ChainNode(next: nil) { accumulator.total &+= $0 }
      for _ in 0..<count {
        let next = head
        head = ChainNode(next: next) { next.receive($0 &+ 1) }
      }
      let first = head
      var value = 0
      return timeRounds {
        value &+= 1
        first.receive(value)
      }
    }
  }

  time(ScaleDimension.mainActorRegister) {
    var registered: UInt64 = 0
    var delivered: UInt64 = 0
    for _ in 0..<rounds {
      let observable = Observable(0)
      let shared = accumulator
      let (tokens, registering, delivering) = onMainQueue {
        () -> ([ObservationToken], UInt64, UInt64) in
        var tokens: [ObservationToken] = []
        tokens.reserveCapacity(count)
        var start = now()
        for _ in 0..<count {
          tokens.append(observable.observe { value, _ in shared.total &+= value })
        }
        let registering = now() - start
        start = now()
        observable.value = 1
        return (tokens, registering, now() - start)
      }
      registered += registering
      delivered += delivering
      onMainQueue { withExtendedLifetime(tokens) {} }
    }
    // The set after the registrations, sampled alongside them.
    samples[ScaleDimension.mainActorSet, default: []].append(
      Double(delivered) / Double(rounds * count))
    return registered
  }

  time(ScaleDimension.deadOwners) {
    var elapsed: UInt64 = 0
    for _ in 0..<rounds {
      let observable = Observable(0)
      do {
        let owners = (0..<count).map { _ in Owner() }
        for owner in owners {
          observable.addObserver(owner) { value, _ in accumulator.total &+= value }
        }
      }
      let start = now()
      observable.value = 1
      elapsed += now() - start
      if observable.observerCount != 0 {
        failures.append("scale: \(observable.observerCount) of \(count) dead owners left")
      }
    }
    return elapsed
  }

  consume(accumulator.total)
  return samples.mapValues(median)
}

/// A job for ``onLargeStack(_:)``: the work, and what it returned once its thread has ended.
private final class LargeStackJob {
  let body: () -> UInt64
  var result: UInt64 = 0

  init(body: @escaping () -> UInt64) {
    self.body = body
  }
}

/// Runs `body` on a new thread with a 512 MiB stack and returns its result once that thread has
/// ended.
private func onLargeStack(_ body: @escaping () -> UInt64) -> UInt64 {
  let job = LargeStackJob(body: body)
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  pthread_attr_setstacksize(&attributes, 512 << 20)
  #if canImport(Darwin)
    var thread: pthread_t?
  #else
    var thread = pthread_t()
  #endif
  let status = pthread_create(
    &thread, &attributes,
    { raw in
      #if canImport(Darwin)
        let job = Unmanaged<LargeStackJob>.fromOpaque(raw).takeUnretainedValue()
      #else
        let job = Unmanaged<LargeStackJob>.fromOpaque(raw!).takeUnretainedValue()
      #endif
      job.result = job.body()
      return nil
    }, Unmanaged.passUnretained(job).toOpaque())
  pthread_attr_destroy(&attributes)
  precondition(status == 0, "pthread_create failed with \(status)")
  #if canImport(Darwin)
    pthread_join(thread!, nil)
  #else
    pthread_join(thread, nil)
  #endif
  return withExtendedLifetime(job) { job.result }
}

/// One level of the hand-written chain.
final class ChainNode {
  let next: ChainNode?
  let body: (Int) -> Void

  init(next: ChainNode?, body: @escaping (Int) -> Void) {
    self.next = next
    self.body = body
  }

  func receive(_ value: Int) { body(value) }
}
