import Dispatch

/// Registrations the deliverer reached behind a gate that was still closed, in registration
/// order, and the rounds delivered since the first of them: they keep their place in the order
/// and miss no round. Those before the first gate still closed join the list as soon as they
/// are caught up; the rest wait for it. Guarded by the observable's lock.
final class HeldRegistrations<Value> {
  private(set) var gates: [RegistrationGate<Value>] = []
  var backlog: [(Value, Value)] = []
  /// Signalled when a gate opens, for a deliverer that waits because `backlog` is full.
  var waitingDeliverer: DispatchSemaphore?

  /// How many rounds the backlog keeps before a deliverer that may wait (one not inside a
  /// callback) waits for the gates to open: the bound on a slow `.initial`'s memory, like the
  /// one waiting setters give every other queued change.
  static var backlogLimit: Int { 1_024 }

  /// Whether the backlog reached its bound with every gate still closed.
  var isFull: Bool { backlog.count >= Self.backlogLimit && openCount == 0 }

  /// How many gates are open before the first closed one: those may be caught up and join the
  /// list, ahead of the later ones, which they precede in registration order.
  var openCount: Int { gates.firstIndex { !$0.isOpen } ?? gates.count }

  /// Whether the open gates missed rounds, so must be caught up before they join the list.
  var openGatesMissedRounds: Bool {
    openCount > 0 && gates[0].firstRound < backlog.count
  }

  /// Splits off the first `count` gates with the rounds they missed, and keeps the rest with the
  /// rounds from the first one any of them missed. (`firstRound` grows along `gates`: the
  /// deliverer holds gates in the order it reaches them.)
  func removeFirst(_ count: Int) -> HeldRegistrations<Value> {
    let first = HeldRegistrations<Value>()
    first.gates = Array(gates.prefix(count))
    first.backlog = backlog
    gates.removeFirst(count)
    let kept = gates.first?.firstRound ?? backlog.count
    if kept > 0 {
      backlog.removeFirst(kept)
      for gate in gates { gate.firstRound -= kept }
    }
    return first
  }

  func hold(_ gate: RegistrationGate<Value>) {
    gate.firstRound = backlog.count
    gates.append(gate)
  }
}
