import Dispatch

/// Registrations the deliverer reached behind a gate that was still closed, in registration
/// order, and the rounds delivered since the first of them: they keep their place in the order
/// and miss no round, and join the list together once every gate among them is open. Guarded by
/// the observable's lock.
final class HeldRegistrations<Value> {
  private(set) var gates: [RegistrationGate<Value>] = []
  var backlog: [(Value, Value)] = []
  /// Signalled when a gate opens, for a deliverer that waits because `backlog` is full.
  var waitingDeliverer: DispatchSemaphore?

  /// How many rounds the backlog keeps before a deliverer that may wait (one not inside a
  /// callback) waits for the gates to open: the bound on a slow `.initial`'s memory, like the
  /// one waiting setters give every other queued change.
  static var backlogLimit: Int { 1_024 }

  /// Whether every gate is open, so the segment can be caught up and join the list.
  var isReady: Bool { gates.allSatisfy { $0.isOpen } }

  func hold(_ gate: RegistrationGate<Value>) {
    gate.firstRound = backlog.count
    gates.append(gate)
  }
}
