/// The work every observer does, identical in every column: add the delivered value to its own
/// running total, which the run prints at the end so that the optimizer cannot drop it.
///
/// `@unchecked Sendable`: the registrations take `@Sendable` closures, and each accumulator is
/// written by one observer, whose calls the library makes one at a time; the run reads the total
/// only after the workload's sets have returned.
final class Accumulator: @unchecked Sendable {
  var total = 0
}

/// A value a workload's callbacks write and the workload reads after its sets returned.
/// `@unchecked Sendable` for the reason `Accumulator` is: one writer at a time, read afterwards.
final class Box<Value>: @unchecked Sendable {
  var value: Value

  init(_ value: Value) {
    self.value = value
  }
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
