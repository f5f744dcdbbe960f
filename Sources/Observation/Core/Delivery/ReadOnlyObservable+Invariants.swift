// The observable keeps mirrors of its queue and gates, read instead of them on hot paths (the
// generic queue costs a metadata look-up per use). A debug build checks that they agree at the
// end of every drain, when the deliverer gives up its role.

#if DEBUG
  extension ReadOnlyObservable {
    /// Stops the program if a mirror disagrees with what it mirrors; lock held, at the end of a
    /// drain (the queue is empty then, unless registrations wait behind a closed gate while no
    /// round runs).
    func _checkInvariants() {
      observers._checkInvariants()
      precondition(hasPending == !pending.isEmpty, "hasPending disagrees with the queue")
      let registrations = pending.count { $0.registration != nil }
      precondition(
        queuedRegistrationCount == registrations,
        "\(queuedRegistrationCount) queued registrations counted, \(registrations) queued")
      precondition(
        queuedRegistrations.count <= registrations, "a queued handle outlived its registration")
      precondition(
        hasHeldRegistrations == (held != nil || catchingUp != nil),
        "hasHeldRegistrations disagrees with the held registrations")
      precondition(held == nil || hasBoundaryWork, "held registrations without boundary work")
      var closedGates = pending.count { event in
        if case .gated(let gate) = event { return !gate.isOpen }
        return false
      }
      closedGates += held?.gates.count { !$0.isOpen } ?? 0
      precondition(
        state.closedGates == closedGates,
        "the state counts \(state.closedGates) closed gates, the queue and held hold \(closedGates)"
      )
      if let reserved = state.reservedFor {
        precondition(
          admissionWaiters.contains { $0.thread == reserved },
          "the role is kept for \(reserved), which does not wait to be admitted")
      }
      precondition(deferredRemovals.isEmpty && !needsCompaction, "removals left unapplied")
    }
  }
#endif
