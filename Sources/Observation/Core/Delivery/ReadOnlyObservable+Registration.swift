// Adding and removing registrations, whatever the way of observing (owner, token, binding).
// While a round runs, additions wait in the queue of pending work and removals are marked or
// deferred, so a round's list is stable (see `DeliveryState.register` and `.remove`).

extension ReadOnlyObservable {
  /// Adds `draft`'s entry and delivers `.initial` through `initial`. A registration with neither
  /// `.old` nor `.new` is not kept, but still replaces the owner's earlier registrations.
  // Inlined into each way of registering, with the common cases first: no `.initial`, no round
  // running, room in the buffer, and nothing to replace (or, out of line, one indexed entry of
  // the owner to replace). They need no propagation, no list of closures to release, no call on
  // the list and no entry value: they fill a slot from the draft. Each of those costs hundreds of
  // instructions in this unspecialized code (generic metadata look-ups, value witnesses),
  // several times what appending costs.
  @inline(__always)
  final func register(_ draft: consuming NewEntry, replacing: Bool, initial: Callback?) {
    if FastPaths.areEnabled && initial == nil && !draft.isRemoved {
      lock.lock()
      unowned(unsafe) let delivery = makeDeliveryIfNeeded()
      if delivery.state.role == .idle && !delivery.hasPending && !delivery.hasHeldRegistrations {
        if !replacing && delivery.observers.hasRoom {
          delivery.observers.appendAssumingRoom(draft)
          lock.unlock()
          return
        }
        if replacing && delivery.observers.reserveIndexedSlot(for: draft.identity) {
          delivery.observers.appendAssumingRoom(draft, indexed: true)
          lock.unlock()
          return
        }
        var replaced: Callback?
        if replacing
          && delivery.observers.reserveSlot(replacingEntryOf: draft.identity, replaced: &replaced)
        {
          delivery.observers.appendAssumingRoom(draft, indexed: true)
          lock.unlock()
          // Released here, after unlocking: what the replaced closure captured may run a deinit.
          releaseOutsideLock(&replaced)
          return
        }
      }
      lock.unlock()
    }
    registerInGeneral(draft, replacing: replacing, initial: initial)
  }

  /// Every other registration: see ``register(_:replacing:initial:)``.
  @inline(never)
  private func registerInGeneral(_ draft: NewEntry, replacing: Bool, initial: Callback?) {
    // `.initial`, and the rounds this thread may deliver meanwhile, form one propagation.
    let context = ObservationContext.current
    context.beginPropagation()
    defer { context.endPropagation() }
    var released: [Callback] = []
    lock.lock()
    _ = makeDeliveryIfNeeded()
    if replacing { removeLocked(.replaceable(draft.identity), released: &released) }
    guard !draft.isRemoved else {
      // Nothing to keep: `.initial` alone needs no place in the order.
      let value = storage
      lock.unlock()
      releaseOutsideLock(&released)
      initial?(value, .initial)
      return
    }
    switch delivery.state.register(on: .current, sendsInitial: initial != nil) {
    case .append:
      delivery.observers.append(draft, released: &released)
      lock.unlock()
      Lock.assertNotHeld()
    case .enqueue:
      registerDuringRound(Entry(draft), gated: false, initial: initial, released: &released)
    case .enqueueGated:
      registerDuringRound(Entry(draft), gated: true, initial: initial, released: &released)
    }
  }

  /// The registrations that arrive while a round runs, entered with the lock held. Kept out of
  /// ``register(_:replacing:initial:)``: code that builds a queued event looks up the generic
  /// metadata of the event and the gate on entry, which every registration would pay.
  @inline(never)
  private func registerDuringRound(
    _ entry: Entry,
    gated: Bool,
    initial: Callback?,
    released: inout [Callback]
  ) {
    guard gated else {
      // Re-entrant: the entry waits in the queue, so it sees only the changes made after this
      // point, and `.initial` can go out now.
      enqueueRegistration(.add(entry), of: entry)
      let value = storage
      lock.unlock()
      releaseOutsideLock(&released)
      initial?(value, .initial)
      return
    }
    let gate = RegistrationGate(entry: entry)
    enqueueRegistration(.gated(gate), of: entry)
    let value = storage
    lock.unlock()
    releaseOutsideLock(&released)
    initial?(value, .initial)
    openGate(gate)
  }

  /// Ends the registrations `selection` names: at once when no round runs or on the delivering
  /// thread, before the next round otherwise. Their closures are released after unlocking.
  final func remove(_ selection: Selection, token: ObservationToken? = nil) {
    var released: [Callback] = []
    lock.withLock {
      // Without delivery storage nobody ever registered: there is nothing to remove.
      guard deliveryStorage != nil else { return }
      removeLocked(selection, slotHint: token?.slot, released: &released)
    }
    releaseOutsideLock(&released)
  }

  /// Removal with the lock held. Closures that may be released now go to `released`.
  private func removeLocked(
    _ selection: Selection,
    slotHint: Int? = nil,
    released: inout [Callback]
  ) {
    if delivery.hasPending { cancelQueuedAdds(selection, released: &released) }
    if delivery.hasHeldRegistrations { cancelHeldRegistrations(selection, released: &released) }
    let action = delivery.state.remove(on: .current)
    if action != .removeNow && delivery.hasMainActorLanes {
      delivery.endedDuringDelivery.append((selection, before: delivery.nextHandleSerial))
      delivery.mainActorEnds?.removalRecorded()
    }
    switch action {
    case .removeNow:
      delivery.observers.remove(selection, slotHint: slotHint, released: &released, taking: true)
    case .mark:
      if delivery.observers.remove(
        selection, slotHint: slotHint, released: &released, taking: false)
      {
        delivery.needsCompaction = true
      }
    case .deferToNextRound:
      delivery.deferredRemovals.append(selection)
      delivery.hasBoundaryWork = true
    }
  }

  /// Queues a registration made during a round, remembering where a token's or a binding's
  /// waits so that cancelling it costs O(1) (see ``cancelQueuedAdds(_:released:)``).
  private func enqueueRegistration(_ event: PendingEvent, of entry: Entry) {
    enqueue(event)
    delivery.queuedRegistrationCount += 1
    if entry.kindBits >= Entry.handleKind {
      delivery.queuedRegistrations[entry.identity] = delivery.pending.positionOfNewest
    }
  }

  /// Cancels the queued registrations `selection` names. A token or a binding finds its own in
  /// O(1), and when it is the newest queued event (a registration cancelled before anything was
  /// queued behind it) it leaves the queue at once, so churn from one thread cannot grow the
  /// queue while another thread delivers. An owner's are found by a scan, made only while
  /// registrations are queued.
  @inline(never)
  private func cancelQueuedAdds(_ selection: Selection, released: inout [Callback]) {
    guard delivery.queuedRegistrationCount > 0 else { return }
    guard case .handle(let identity) = selection else {
      delivery.pending.updateEach { event in
        guard let entry = event.registration, entry.isSelected(by: selection) else { return event }
        if entry.kindBits >= Entry.handleKind { delivery.queuedRegistrations[entry.identity] = nil }
        return cancelled(event, released: &released)
      }
      return
    }
    guard let position = delivery.queuedRegistrations.removeValue(forKey: identity) else { return }
    if position == delivery.pending.positionOfNewest {
      _ = cancelled(delivery.pending.removeLast(), released: &released)
      delivery.hasPending = !delivery.pending.isEmpty
    } else {
      delivery.pending.update(at: position) { cancelled($0, released: &released) }
    }
  }

  /// A queued registration's event once cancelled: an entry's closure goes to `released`; a gate
  /// stays, cancelled, for its registering thread to open.
  func cancelled(_ event: PendingEvent, released: inout [Callback]) -> PendingEvent {
    delivery.queuedRegistrationCount -= 1
    switch event {
    case .add(var entry):
      released.append(entry.takeCallback(leaving: delivery.observers.vacantCallback))
      return .cancelled
    case .gated(let gate):
      // Its `.initial` runs the registering thread's own reference to the closure.
      gate.cancel(released: &released, leaving: delivery.observers.vacantCallback)
      return event
    case .change, .cancelled:
      preconditionFailure("Only a queued registration can be cancelled.")
    }
  }

  /// Cancels the held registrations `selection` names and releases their closures at once, even
  /// in a segment being caught up: the catch-up calls a copy of the entry, which keeps the
  /// closure it runs alive for that call.
  private func cancelHeldRegistrations(_ selection: Selection, released: inout [Callback]) {
    for segment in [delivery.held, delivery.catchingUp] {
      for gate in segment?.gates ?? [] where gate.entry.isSelected(by: selection) {
        gate.cancel(released: &released, leaving: delivery.observers.vacantCallback)
      }
    }
  }
}
