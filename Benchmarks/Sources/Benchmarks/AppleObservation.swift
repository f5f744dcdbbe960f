import Observation

/// Apple's Observation module, the closest peer in the toolchain, used the way a synchronous
/// observer must use it: `withObservationTracking` calls `onChange` once, before the change, so
/// each observer re-arms its tracking after every set, reading the new value as it does.
@Observable
final class AppleModel {
  var value = 0
}

/// One observer of an ``AppleModel``: its `apply` closure adds the value it reads, and its
/// `onChange` marks it stale so the set's caller re-arms it.
final class AppleTracker: @unchecked Sendable {
  // Touched only by the benchmark's one thread: `onChange` runs synchronously inside the set.
  private let model: AppleModel
  private let accumulator: Accumulator
  private(set) var isStale = false

  init(model: AppleModel, accumulator: Accumulator) {
    self.model = model
    self.accumulator = accumulator
    arm()
  }

  func arm() {
    isStale = false
    withObservationTracking {
      accumulator.total &+= model.value
    } onChange: { [unowned self] in
      isStale = true
    }
  }
}

/// Fan-out through Apple's Observation: a set, then every stale observer re-arms.
func appleObservationContender(observers count: Int) -> Contender {
  let accumulators = Accumulators(count: count)
  let model = AppleModel()
  let trackers = accumulators.all.map { AppleTracker(model: model, accumulator: $0) }
  let run: (Int) -> Void = { iterations in
    for value in 0..<iterations {
      model.value = value
      for tracker in trackers where tracker.isStale { tracker.arm() }
    }
  }
  return Contender(
    Column.appleObservation, unitsPerIteration: count,
    checksum: { withExtendedLifetime(trackers) { accumulators.checksum } }, run: run)
}
