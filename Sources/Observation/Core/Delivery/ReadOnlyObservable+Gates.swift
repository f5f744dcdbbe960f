import Dispatch

// Registrations with `.initial` made while another thread delivers: they are gated until their
// `.initial` returns, and catch up on the rounds they missed before joining the list, so they
// see every change after their registration, in order, before any later round.

extension ReadOnlyObservable {
  /// Called by the registering thread once `.initial` has returned.
  func openGate(_ gate: RegistrationGate<Value>) {
    lock.lock()
    gate.isOpen = true
    let missedRounds = delivery.held?.openGatesMissedRounds ?? false
    switch delivery.state.openGate(on: .current, missedRounds: missedRounds) {
    case .leaveToDeliverer:
      delivery.hasBoundaryWork = true
      let deliverer = delivery.held?.waitingDeliverer
      lock.unlock()
      deliverer?.signal()
    case .applyRegistrations:
      // Nothing runs: what is queued behind this gate, and held registrations that missed no
      // round, join the list now, in order, up to the next closed gate.
      var released: [Callback] = []
      if let segment = delivery.held, segment.openCount > 0 {
        for gate in takeOpenGates(of: segment).gates { join(gate, released: &released) }
      }
      if delivery.held == nil {
        while let event = delivery.pending.first, apply(event, released: &released) {
          didDequeue(delivery.pending.popFirst().unsafelyUnwrapped)
        }
        delivery.hasPending = !delivery.pending.isEmpty
      }
      lock.unlock()
      releaseOutsideLock(&released)
    case .catchUp:
      delivery.hasBoundaryWork = true
      lock.unlock()
      drain()
    }
  }

  /// Adds a held registration's entry to the list, or releases the closure of a cancelled one;
  /// lock held.
  func join(_ gate: RegistrationGate<Value>, released: inout [Callback]) {
    if !gate.isCancelled && gate.entry.isLive {
      delivery.observers.append(gate.entry, released: &released)
    } else {
      released.append(gate.takeCallback(leaving: delivery.observers.vacantCallback))
    }
  }

  /// What the deliverer does between rounds, lock held: applies removals from other threads and
  /// returns the held registrations to catch up, once every gate among them is open (delivered
  /// after unlocking).
  func boundaryWork(released: inout [Callback]) -> CatchUp? {
    applyDeferredRemovals(released: &released)
    guard let segment = delivery.held else {
      delivery.hasBoundaryWork = false
      return nil
    }
    // A closed first gate keeps the flag up: every round must be kept for it.
    guard segment.openCount > 0 else { return nil }
    let open = takeOpenGates(of: segment)
    delivery.catchingUp = open
    delivery.hasHeldRegistrations = true
    return CatchUp(segment: open, observable: self)
  }

  /// Takes the open gates before the first closed one out of `segment` (the held one), lock
  /// held: the whole segment when every gate is open. A closed gate left held keeps
  /// `hasBoundaryWork` up, so that every round is kept for it.
  private func takeOpenGates(of segment: HeldRegistrations<Value>) -> HeldRegistrations<Value> {
    guard segment.openCount < segment.gates.count else {
      delivery.held = nil
      delivery.hasHeldRegistrations = delivery.catchingUp != nil
      delivery.hasBoundaryWork = false
      return segment
    }
    return segment.removeFirst(segment.openCount)
  }

  /// For a queued registration the deliverer reaches, the gate that holds it back: its own gate
  /// if still closed, or a new open one when registrations are already held (it must come after
  /// them); `nil` when it may join the list now. Lock held.
  func heldGate(for event: PendingEvent) -> RegistrationGate<Value>? {
    switch event {
    case .gated(let gate) where !gate.isOpen || delivery.held != nil: return gate
    case .add(let entry) where delivery.held != nil:
      return RegistrationGate(entry: entry, isOpen: true)
    default: return nil
    }
  }

  /// Delivers the rounds held registrations missed, round by round and in registration order
  /// within a round (each from the round after its registration), then adds them to the list.
  struct CatchUp {
    let segment: HeldRegistrations<Value>
    let observable: ReadOnlyObservable<Value>

    func deliver() {
      // Only the deliverer touches a ready segment, so its backlog is stable here. A removal may
      // cancel a gate meanwhile: from another thread, or from an entry's own `.old` callback,
      // after which its `.new` must not run.
      for (round, (oldValue, newValue)) in segment.backlog.enumerated() {
        for gate in segment.gates where gate.firstRound <= round {
          call(gate, oldValue, .old, bit: Entry.oldBit)
        }
        for gate in segment.gates where gate.firstRound <= round {
          call(gate, newValue, .new, bit: Entry.newBit)
        }
      }
      observable.lock.lock()
      var released: [Callback] = []
      // Removals that arrived during the catch-up come first (the append may compact).
      observable.applyDeferredRemovals(released: &released)
      for gate in segment.gates { observable.join(gate, released: &released) }
      observable.delivery.catchingUp = nil
      observable.delivery.hasHeldRegistrations = observable.delivery.held != nil
      observable.lock.unlock()
      releaseOutsideLock(&released)
    }

    private func call(
      _ gate: RegistrationGate<Value>, _ value: Value, _ option: ObservableOptions, bit: UInt
    ) {
      // A copy, read under the lock: it keeps the closure alive for this call even if a removal
      // releases the gate's own reference meanwhile.
      var entry = observable.lock.withLock { gate.entry }
      // A cancelled gate's entry is marked removed: it wants nothing.
      guard entry.wants(bit) else { return }
      _ = withUnsafeMutablePointer(to: &entry) { observable.call($0, value, option) }
    }
  }
}
