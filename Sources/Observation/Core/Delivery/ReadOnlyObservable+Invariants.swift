// The observable keeps mirrors of its queue, read instead of them on hot paths (the
// generic queue costs a metadata look-up per use). A debug build checks that they agree at the
// end of every drain, when the deliverer gives up its role.

#if DEBUG
  extension ReadOnlyObservable {
    /// Stops the program if a mirror disagrees with what it mirrors; lock held, at the end of a
    /// drain, when the queue is empty.
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
        delivery.deferredRemovals.isEmpty && !delivery.needsCompaction, "removals left unapplied")
    }
  }
#endif
