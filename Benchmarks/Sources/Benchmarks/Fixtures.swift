/// The work every observer does, identical in every column: add the delivered value to its own
/// running total, which the run prints at the end so that the optimizer cannot drop it.
final class Accumulator {
  var total = 0
}

/// An object standing in for a view or a view model that owns registrations.
final class Owner {}

/// One accumulator per observer, plus the checksum over them.
struct Accumulators {
  let all: [Accumulator]

  init(count: Int) {
    all = (0..<count).map { _ in Accumulator() }
  }

  var checksum: Int { all.reduce(0) { $0 &+ $1.total } }
}

/// Where every workload's checksums end up; printed at the end of the run.
nonisolated(unsafe) var consumed = 0

func consume(_ value: Int) {
  consumed = consumed &+ value
}
