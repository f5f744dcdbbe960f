// The deliverer's loop: applies the work its own callbacks queued, in arrival order
// (registrations, removals from other threads, and its own changes, each delivered as a round),
// until the queue is empty; then gives the role back.

extension ReadOnlyObservable {
  /// Applies queued work in arrival order, running a round for each queued change, until the
  /// queue is empty; then gives up the deliverer role. Only the deliverer calls this.
  func drain() {
    lock.lock()
    guard delivery.hasPending || delivery.hasBoundaryWork || delivery.needsCompaction else {
      #if DEBUG
        _checkInvariants()
      #endif
      // Removals are recorded there only once main-actor lanes exist (and they never go).
      if delivery.hasMainActorLanes { delivery.forgetEndedDuringDelivery() }
      delivery.state.finish(on: .current)
      lock.unlock()
      return
    }
    drainQueue()
  }

  /// The slow half of ``drain()``: entered with the lock held, returns with it released. Kept
  /// apart because touching the generic queue costs a metadata look-up per call even when the
  /// code that uses it does not run.
  @inline(never)
  private func drainQueue() {
    let thread = ThreadID.current
    var released = [Callback]()
    while true {
      delivery.state.requireDeliverer(thread)
      if delivery.needsCompaction {
        // Entries the last round marked (removed in a callback, dead owners) go now, so their
        // closures, and what those own, are released before the next round, not at the end.
        // Dropping the marked ones is enough; `compact()` would load every owner's weak
        // reference again.
        applyDeferredRemovals(released: &released)
        delivery.observers.removeMarked(released: &released)
        delivery.needsCompaction = false
      }
      if delivery.hasBoundaryWork {
        applyDeferredRemovals(released: &released)
        delivery.hasBoundaryWork = false
      }
      guard let event = delivery.pending.first else {
        guard released.isEmpty && !delivery.needsCompaction else {
          // Let go of removed closures while still holding the role: the registrations they
          // own (a token in a closure) end before any later round can start.
          lock.unlock()
          releaseOutsideLock(&released)
          lock.lock()
          continue
        }
        break
      }
      didDequeue(delivery.pending.popFirst().unsafelyUnwrapped)
      switch event {
      case .change(let oldValue, let newValue):
        let tracer = delivery.tracer
        let lanes = delivery.hasMainActorLanes ? delivery.mainActorLanes : nil
        lock.unlock()
        // Removed closures go before the round: what they own ends before it.
        releaseOutsideLock(&released)
        deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
        lock.lock()
      case .add(let entry):
        delivery.observers.append(entry, released: &released)
      case .cancelled:
        break
      }
    }
    delivery.hasPending = false
    #if DEBUG
      _checkInvariants()
    #endif
    delivery.forgetEndedDuringDelivery()
    delivery.state.finish(on: thread)
    lock.unlock()
  }

  /// Applies the removals other threads made during the current round, lock held. All of them
  /// are marked before anything compacts: compaction writes into the tokens of the entries it
  /// moves, and a token whose removal is pending may already be gone.
  func applyDeferredRemovals(released: inout [Callback]) {
    guard !delivery.deferredRemovals.isEmpty else { return }
    for selection in delivery.deferredRemovals {
      delivery.observers.remove(selection, released: &released, taking: true, compacting: false)
    }
    delivery.deferredRemovals.removeAll()
    delivery.observers.removeMarkedIfWorthIt(released: &released)
  }

  /// Forgets a queued registration that left the queue without being cancelled.
  func didDequeue(_ event: PendingEvent) {
    guard let entry = event.registration else { return }
    delivery.queuedRegistrationCount -= 1
    if entry.kindBits >= Entry.handleKind { delivery.queuedRegistrations[entry.identity] = nil }
  }

  func enqueue(_ event: PendingEvent) {
    delivery.pending.append(event)
    delivery.hasPending = true
  }

  @inline(never)
  func enqueueChange(old oldValue: Value, new newValue: Value) {
    enqueue(.change(old: oldValue, new: newValue))
  }
}
