import Dispatch

// The deliverer's loop: applies queued work in arrival order (registrations, removals, gated
// catch-ups) and runs a round for each queued change, until the queue is empty or the role is
// handed to the library's delivery queue (see `DeliveryState.reachChange`).

extension ReadOnlyObservable {
  /// Applies queued work in arrival order, running a round for each queued change, until the
  /// queue is empty; then gives up the deliverer role. Only the deliverer calls this.
  func drain(onQueue: Bool = false) {
    lock.lock()
    guard delivery.hasPending || delivery.hasBoundaryWork || delivery.needsCompaction else {
      #if DEBUG
        _checkInvariants()
      #endif
      delivery.endedDuringDelivery.removeAll()
      finishDelivering(on: .current)
      return
    }
    drainQueue(onQueue: onQueue)
  }

  /// The delivery queue's job: takes the role it was handed and delivers what nobody waits for.
  func runDeliveryQueueJob() {
    let context = ObservationContext.current
    context.beginPropagation()
    lock.lock()
    delivery.state.adoptQueuedRole(on: .current)
    lock.unlock()
    drain(onQueue: true)
    context.endPropagation()
  }

  /// The slow half of ``drain()``: entered with the lock held, returns with it released. Kept
  /// apart because touching the generic queue costs a metadata look-up per call even when the
  /// code that uses it does not run.
  @inline(never)
  private func drainQueue(onQueue: Bool) {
    let thread = ThreadID.current
    var released: [Callback] = []
    var waitedForGates = false
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
      if delivery.hasBoundaryWork, let catchUp = boundaryWork(released: &released) {
        lock.unlock()
        releaseOutsideLock(&released)
        catchUp.deliver()
        lock.lock()
        continue
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
      if case .change(_, _, let setter) = event {
        // What happens to the change is the state's decision; the facts it may ask for (a scan
        // of the queue, the clock) are read only when it asks.
        let context = ObservationContext.current
        switch delivery.state.reachChange(
          by: setter, on: thread, onQueue: onQueue,
          hasClosuresToRelease: !released.isEmpty,
          heldBacklogIsFull: delivery.held?.isFull ?? false,
          mayWait: context.propagationDepth <= 1 && !context.isFlushing,
          waitedForGates: waitedForGates,
          ownChangeQueued: delivery.pending.contains { Self.isChange($0, by: thread) },
          mayCombine: context.canSeparatePropagations,
          now: DispatchTime.now().uptimeNanoseconds)
        {
        case .deliver: break
        case .handOverToQueue:
          handOverToQueue(released: &released)
          return
        case .releaseClosuresFirst:
          lock.unlock()
          releaseOutsideLock(&released)
          lock.lock()
          continue
        case .waitForGates:
          waitedForGates = !waitForGates(released: &released)
          continue
        }
      }
      waitedForGates = false
      didDequeue(delivery.pending.popFirst().unsafelyUnwrapped)
      switch event {
      case .change(let oldValue, let newValue, _):
        delivery.held?.backlog.append((oldValue, newValue))
        let tracer = delivery.tracer
        let lanes = delivery.hasMainActorLanes ? delivery.mainActorLanes : nil
        lock.unlock()
        releaseOutsideLock(&released)
        if case .change(_, _, let setter) = event, setter != .thread(thread) {
          // Another thread's change: its own propagation, whose derived values are published
          // before its setter is let go.
          ObservationContext.current.deliverSeparately {
            deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
          }
        } else {
          deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
        }
        lock.lock()
        delivery.state.didDeliverRound()
      case .add, .gated, .cancelled:
        if let gate = heldGate(for: event) {
          // Behind a closed gate: held, with the rounds from here on kept for it, so that its
          // place in the order is kept.
          if delivery.held == nil { delivery.held = HeldRegistrations() }
          delivery.held.unsafelyUnwrapped.hold(gate)
          delivery.hasHeldRegistrations = true
          delivery.hasBoundaryWork = true
        } else {
          _ = apply(event, released: &released)
        }
      }
    }
    delivery.hasPending = false
    #if DEBUG
      _checkInvariants()
    #endif
    delivery.endedDuringDelivery.removeAll()
    finishDelivering(on: thread)
  }

  /// Gives up the role, entered with the lock held, and returns with it released, having woken
  /// the setter waiting to be admitted that the state names, if it sleeps.
  @inline(__always)
  private func finishDelivering(on thread: ThreadID) {
    guard delivery.admissionWaiters.isEmpty else {
      return finishDeliveringBeforeWaitingSetters(on: thread)
    }
    delivery.state.finish(on: thread)
    lock.unlock()
  }

  @inline(never)
  private func finishDeliveringBeforeWaitingSetters(on thread: ThreadID) {
    let oldest = delivery.admissionWaiters[0]
    let next = delivery.state.finish(
      on: thread, oldestWaiting: (oldest.thread, oldest.since),
      now: DispatchTime.now().uptimeNanoseconds)
    guard let next, let waiter = delivery.admissionWaiters.first(where: { $0.thread == next }),
      waiter.isParked
    else {
      lock.unlock()
      return
    }
    // Woken once: it parks again if another setter takes the role first.
    waiter.isParked = false
    lock.unlock()
    waiter.semaphore.signal()
  }

  /// Carries out ``DeliveryState/ChangeAction/waitForGates``, entered and left with the lock
  /// held: waits without the lock until a held gate opens or a turn timeout passes. Returns
  /// whether a gate opened.
  private func waitForGates(released: inout [Callback]) -> Bool {
    guard let segment = delivery.held else { return true }
    let semaphore = DispatchSemaphore(value: 0)
    segment.waitingDeliverer = semaphore
    lock.unlock()
    releaseOutsideLock(&released)
    let isOpened = semaphore.wait(timeout: .now() + Self.turnTimeout) == .success
    lock.lock()
    segment.waitingDeliverer = nil
    return isOpened || segment.openCount > 0
  }

  /// Applies a queued registration, lock held: adds its entry to the list, or releases the
  /// closure of a cancelled one. Returns `false`, applying nothing, for a gate that is still
  /// closed (its `.initial` runs on another thread).
  func apply(_ event: PendingEvent, released: inout [Callback]) -> Bool {
    switch event {
    case .add(let entry):
      delivery.observers.append(entry, released: &released)
    case .gated(let gate):
      guard gate.isOpen else { return false }
      if !gate.entry.isRemoved {
        delivery.observers.append(gate.entry, released: &released)
      } else {
        released.append(gate.takeCallback(leaving: delivery.observers.vacantCallback))
      }
    case .cancelled:
      break
    case .change:
      preconditionFailure("A change is not a registration.")
    }
    return true
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
  func enqueueChange(old oldValue: Value, new newValue: Value, setter: DeliveryState.Setter) {
    enqueue(.change(old: oldValue, new: newValue, setter: setter))
  }
}
