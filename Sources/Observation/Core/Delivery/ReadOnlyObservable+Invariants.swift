// The observable keeps mirrors of its queue and gates, read instead of them on hot paths (the
// generic queue costs a metadata look-up per use). A debug build checks that they agree at the
// end of every drain, when the deliverer gives up its role.

#if DEBUG
  extension ReadOnlyObservable {
    /// Stops the program if a mirror disagrees with what it mirrors; lock held, at the end of a
    /// drain (the queue is empty then, unless registrations wait behind a closed gate while no
    /// round runs).
    func _checkInvariants() {
      delivery.observers._checkInvariants()
      precondition(
        delivery.hasPending == !delivery.pending.isEmpty,
        "delivery.hasPending disagrees with the queue")
      let registrations = delivery.pending.count { $0.registration != nil }
      precondition(
        delivery.queuedRegistrationCount == registrations,
        "\(delivery.queuedRegistrationCount) queued registrations counted, \(registrations) queued")
      precondition(
        delivery.queuedRegistrations.count <= registrations,
        "a queued handle outlived its registration")
      precondition(
        delivery.hasHeldRegistrations == (delivery.held != nil || delivery.catchingUp != nil),
        "delivery.hasHeldRegistrations disagrees with the delivery.held registrations")
      precondition(
        delivery.held == nil || delivery.hasBoundaryWork,
        "delivery.held registrations without boundary work")
      var closedGates = delivery.pending.count { event in
        if case .gated(let gate) = event { return !gate.isOpen }
        return false
      }
      closedGates += delivery.held?.gates.count { !$0.isOpen } ?? 0
      precondition(
        delivery.state.closedGates == closedGates,
        "the delivery.state counts \(delivery.state.closedGates) closed gates, the queue and delivery.held hold \(closedGates)"
      )
      if let reserved = delivery.state.reservedFor {
        precondition(
          delivery.admissionWaiters.contains { $0.thread == reserved },
          "the role is kept for \(reserved), which does not wait to be admitted")
      }
      precondition(
        delivery.deferredRemovals.isEmpty && !delivery.needsCompaction, "removals left unapplied")
    }
  }
#endif
