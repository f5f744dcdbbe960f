/// Registrations the deliverer reached behind a gate that was still closed, in registration
/// order, and the rounds delivered since the first of them: they keep their place in the order
/// and miss no round, and join the list together once every gate among them is open. Guarded by
/// the observable's lock.
final class HeldRegistrations<Value> {
  private(set) var gates: [RegistrationGate<Value>] = []
  var backlog: [(Value, Value)] = []

  /// Whether every gate is open, so the segment can be caught up and join the list.
  var isReady: Bool { gates.allSatisfy { $0.isOpen } }

  func hold(_ gate: RegistrationGate<Value>) {
    gate.firstRound = backlog.count
    gates.append(gate)
  }
}
