/// One callback as the core suites record it: who was called, with which option and value.
struct Call: Equatable, CustomStringConvertible {
  let observer: String
  let option: ObservableOptionsName
  let value: Int

  init(_ observer: String, _ option: ObservableOptionsName, _ value: Int) {
    self.observer = observer
    self.option = option
    self.value = value
  }

  var description: String { "\(observer).\(option)(\(value))" }
}

enum ObservableOptionsName: String, Equatable {
  case initial, old, new
}

/// An owner object for registrations; its only job is to be alive or not.
final class Owner: @unchecked Sendable {}

/// A deterministic generator, so a failing randomized run can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
