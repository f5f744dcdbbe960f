// Adding and removing registrations, whatever the way of observing (owner, token, binding).
// While a round runs, additions wait in the queue of pending work and removals are marked or
// deferred, so a round's list is stable (see `DeliveryState.register` and `.remove`).

extension ReadOnlyObservable {
  /// Adds `draft`'s entry and, if `sendsInitial`, delivers `.initial` through `initial`. A
  /// registration with neither `.old` nor `.new` is not kept, but still replaces the owner's
  /// earlier registrations.
  ///
  /// `handleSerial` is the serial of the main-actor handle made for `draft`, if any: with
  /// `replacing`, the owner's earlier registrations end, and so do their waiting main-actor
  /// calls, but not this registration's own calls, although its handle was made first.
  ///
  /// `initial` is a closure and a flag rather than an optional closure: in this unspecialized
  /// code, wrapping a closure in an optional and unwrapping it each allocate a reabstraction
  /// thunk and look up the function type's metadata. The flag has no default: every caller
  /// says whether it sends `.initial`, so that none sends it by omission.
  // Inlined into each way of registering, with the common cases first: no `.initial`, no round
  // running, room in the buffer, and nothing to replace (or, out of line, one indexed entry of
  // the owner to replace). They need no propagation, no list of closures to release, no call on
  // the list and no entry value: they fill a slot from the draft. Each of those costs hundreds of
  // instructions in this unspecialized code (generic metadata look-ups, value witnesses),
  // several times what appending costs.
  @inline(__always)
  final func register(
    _ draft: consuming NewEntry, replacing: Bool, initial: Callback, sendsInitial: Bool,
    endingHandlesBefore handleSerial: UInt? = nil
  ) {
    if FastPaths.areEnabled && !sendsInitial && !draft.isRemoved {
      lock.lock()
      unowned(unsafe) let delivery = makeDeliveryIfNeeded()
      if delivery.state.role == .idle && !delivery.hasPending {
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
        if replacing, let slot = delivery.observers.replaceableSlot(ofOwner: draft.identity) {
          let replaced = delivery.observers.replaceEntry(at: slot, ofOwner: draft.identity)
          delivery.observers.appendAssumingRoom(draft, indexed: true)
          lock.unlock()
          // Released here, after unlocking: what the replaced closure captured may run a deinit.
          releaseOutsideLock(replaced)
          return
        }
      }
      lock.unlock()
    }
    registerInGeneral(
      draft, replacing: replacing, initial: initial, sendsInitial: sendsInitial,
      endingHandlesBefore: handleSerial)
  }

  /// The general path of every registration. A registration with `.initial` is a propagation of
  /// its own: it takes the graph's turn, so that no other thread's change is delivered between
  /// its `.initial` and its first round, and holds the deliverer role while `.initial` runs, so
  /// that a change made inside `.initial` reaches it after `.initial`.
  @inline(never)
  private func registerInGeneral(
    _ draft: NewEntry, replacing: Bool, initial: Callback, sendsInitial wantsInitial: Bool,
    endingHandlesBefore handleSerial: UInt?
  ) {
    let context = ObservationContext.current
    context.beginPropagation()
    defer { context.endPropagation() }
    var released = [Callback]()
    lock.lock()
    let graph = makeDeliveryIfNeeded().graph
    var sendsInitial = wantsInitial
    // The propagation holding the graph, when it waits for this one: this one goes first.
    var later: CrossedPropagation?
    if sendsInitial && !context.holdsTurn(of: graph) {
      if graph.takeIfFree(by: context) {
        context.noteTaken(graph)
      } else {
        lock.unlock()
        // A cycle of waits makes the other thread queue its change instead. Only a holder stuck
        // in a callback, or one this propagation goes before (see
        // `ObservationContext.goesBefore`), makes this registration go without the turn:
        // `.initial` then runs at once, and the changes stored meanwhile are delivered after it
        // (`registerCatchingUp`).
        let goesFirst = context.goesBefore != nil
        let outcome = context.takeTurn(of: graph, breakingCycles: !goesFirst)
        sendsInitial = outcome == .holding
        lock.lock()
        if goesFirst && outcome == .cycle { later = graph.holder }
      }
    }
    if replacing {
      // Made before this removal, the registration's own main-actor handle must outlive it.
      removeLocked(
        .replaceable(draft.identity), endingHandlesBefore: handleSerial, released: &released)
    }
    guard !draft.isRemoved else {
      // Nothing to keep: `.initial` alone needs no place in the order.
      let value =
        context.holdsTurn(of: graph)
        ? storage : valueForRegistrationWithoutTurnLocked(goingBefore: later)
      lock.unlock()
      releaseOutsideLock(&released)
      if wantsInitial { initial(value, .initial) }
      return
    }
    guard sendsInitial || !wantsInitial else {
      return registerCatchingUp(
        Entry(draft), goingBefore: later, initial: initial, released: &released)
    }
    let queueIsEmpty =
      !delivery.hasPending && !delivery.hasBoundaryWork && !delivery.needsCompaction
    let action = delivery.state.register(
      on: .current, sendsInitial: sendsInitial, queueIsEmpty: queueIsEmpty)
    switch action {
    case .append:
      delivery.observers.append(draft, released: &released)
      lock.unlock()
      Lock.assertNotHeld()
      releaseOutsideLock(&released)
    case .enqueue:
      // Re-entrant, or during another thread's round: the entry waits in the queue, so it sees
      // only the changes made after this point, and `.initial` can go out now.
      enqueueRegistration(Entry(draft))
      let value = storage
      lock.unlock()
      releaseOutsideLock(&released)
      if wantsInitial { initial(value, .initial) }
    case .appendAndDeliverInitial, .enqueueAndDeliverInitial:
      if action == .appendAndDeliverInitial {
        delivery.observers.append(draft, released: &released)
      } else {
        enqueueRegistration(Entry(draft))
      }
      let value = storage
      lock.unlock()
      releaseOutsideLock(&released)
      initial(value, .initial)
      drain()
    }
  }

  /// A registration with `.initial` whose wait for the turn could have deadlocked, entered with
  /// the lock held: `.initial` runs at once, on this thread, with the value stored now, or the
  /// value from before the holder's propagation if that has not ended (see
  /// `valueForRegistrationWithoutTurnLocked`). Each change stored meanwhile is recorded for the
  /// registration as it is stored (see `catchingUp`), and delivered to it, in order, none
  /// skipped, before the entry joins the list. A removal meanwhile marks it, and it joins
  /// nothing.
  ///
  /// By this thread, right after `.initial`, when the holder is stuck in a callback. By the
  /// holder, when it waits for this propagation, which goes first (`later`, see
  /// ``ObservationContext/goesBefore``): the holder delivers the change it made here, and those
  /// it makes later, once this propagation has ended and its own goes on.
  @inline(never)
  private func registerCatchingUp(
    _ entry: Entry, goingBefore later: CrossedPropagation?, initial: Callback,
    released: inout [Callback]
  ) {
    let registration = CatchingUpRegistration(entry)
    delivery.catchingUp.append(registration)
    delivery.hasCatchingUp = true
    let value = valueForRegistrationWithoutTurnLocked(goingBefore: later)
    // `later` stored here already: its change is the first the registration catches up with.
    if let later, later.tag == delivery.valueBefore?.tag {
      registration.record(old: value, new: storage)
    }
    lock.unlock()
    releaseOutsideLock(&released)
    initial(value, .initial)
    guard let later else { return catchUp(registration) }
    ObservationContext.current.postWhenThisPropagationEnds(to: later) {
      self.catchUp(registration)
    }
  }

  /// Delivers to `registration`, in order, the changes recorded for it, then adds its entry to
  /// the list; entered and left without the lock.
  private func catchUp(_ registration: CatchingUpRegistration<Value>) {
    var released = [Callback]()
    lock.lock()
    while !registration.backlog.isEmpty && !registration.entry.isRemoved {
      let rounds = registration.backlog
      registration.backlog = []
      // A copy, read under the lock, keeps the closure alive for the calls.
      var copy = registration.entry
      lock.unlock()
      withUnsafeMutablePointer(to: &copy) { entry in
        for (oldValue, newValue) in rounds {
          // Read again before each call: a removal may have come meanwhile.
          if lock.withLock({ registration.entry.wants(Entry.oldBit) }) {
            _ = call(entry, oldValue, .old)
          }
          if lock.withLock({ registration.entry.wants(Entry.newBit) }) {
            _ = call(entry, newValue, .new)
          }
        }
      }
      lock.lock()
    }
    delivery.catchingUp.removeAll { $0 === registration }
    delivery.hasCatchingUp = !delivery.catchingUp.isEmpty
    guard !registration.entry.isRemoved else {
      lock.unlock()
      return
    }
    // Still under the lock that recorded its last change: a change stored from now on finds it
    // in the list, or behind it in the queue.
    switch delivery.state.register(on: .current, sendsInitial: false) {
    case .append:
      delivery.observers.append(registration.entry, released: &released)
    case .enqueue, .appendAndDeliverInitial, .enqueueAndDeliverInitial:
      enqueueRegistration(registration.entry)
    }
    lock.unlock()
    releaseOutsideLock(&released)
  }

  final func remove(_ selection: Selection, token: ObservationToken? = nil) {
    var released = [Callback]()
    lock.withLock {
      // Without delivery storage nobody ever registered: there is nothing to remove.
      guard deliveryStorage != nil else { return }
      removeLocked(selection, slotHint: token?.slot, released: &released)
    }
    releaseOutsideLock(&released)
  }

  /// Removal with the lock held. Closures that may be released now go to `released`.
  ///
  /// A removal made while a thread delivers also ends the main-actor calls already waiting for
  /// the registrations it selects, those whose handle was made before it (see
  /// `endedDuringDelivery`): before `handleSerial` when given, the serial of the handle that the
  /// registration making this removal made for itself, a moment before.
  private func removeLocked(
    _ selection: Selection,
    slotHint: Int? = nil,
    endingHandlesBefore handleSerial: UInt? = nil,
    released: inout [Callback]
  ) {
    if delivery.hasPending { cancelQueuedAdds(selection, released: &released) }
    if delivery.hasCatchingUp {
      for registration in delivery.catchingUp where registration.entry.isSelected(by: selection) {
        registration.entry.markRemoved()
      }
    }
    let action = delivery.state.remove(on: .current)
    if action != .removeNow && delivery.hasMainActorLanes {
      delivery.endedDuringDelivery.append(
        (selection, before: handleSerial ?? delivery.nextHandleSerial))
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
  /// waits so that cancelling it costs O(1) (see ``cancelQueuedAdds(_:released:)``). Out of line,
  /// so that the registrations that queue nothing pay no metadata look-up for the queue's event.
  @inline(never)
  private func enqueueRegistration(_ entry: Entry) {
    enqueue(.add(entry))
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

  /// A queued registration's event once cancelled: its entry's closure goes to `released`.
  func cancelled(_ event: PendingEvent, released: inout [Callback]) -> PendingEvent {
    delivery.queuedRegistrationCount -= 1
    switch event {
    case .add(let entry):
      // The event leaves the queue with its entry; `released` keeps the closure until after
      // unlocking.
      released.append(entry.callback)
      return .cancelled
    case .change, .cancelled:
      preconditionFailure("Only a queued registration can be cancelled.")
    }
  }
}

/// A registration catching up before it joins the list (see `registerCatchingUp`): every change
/// stored meanwhile records its values here, and a removal finds it here and marks its
/// entry. Guarded by the observable's lock.
final class CatchingUpRegistration<Value> {
  var entry: ObserverEntry<Value>
  var backlog: [(Value, Value)] = []

  /// Records a change's values: called under the lock by whoever stores it.
  func record(old oldValue: Value, new newValue: Value) {
    backlog.append((oldValue, newValue))
  }

  init(_ entry: ObserverEntry<Value>) {
    self.entry = entry
  }
}

/// Lets go of `callback` here, where the caller holds no lock: what it captured may run a deinit,
/// which is user code.
///
/// A call, taking the closure itself: keeping a value alive with `withExtendedLifetime` in this
/// unspecialized code looks up its type's metadata (a function type, an optional, an array of
/// them) first, and an optimised build may end a value's lifetime right after its last use,
/// which is inside the locked region where it was taken.
@inline(never)
func releaseOutsideLock<Value>(_ callback: consuming @escaping (Value, ObservableOptions) -> Void) {
  Lock.assertNotHeld("A closure was released")
}

/// Lets go of the closures `released` holds here, where the caller holds no lock, and leaves it
/// empty (see the single-closure form). Most calls find it empty and return at once.
@inline(__always)
func releaseOutsideLock<Value>(_ released: inout [(Value, ObservableOptions) -> Void]) {
  Lock.assertNotHeld("A closure was released")
  if released.count > 0 { releaseAll(&released) }
}

@inline(never)
private func releaseAll<Value>(_ released: inout [(Value, ObservableOptions) -> Void]) {
  released = Array()
}
