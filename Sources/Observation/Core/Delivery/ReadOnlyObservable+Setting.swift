// Storing a value and starting its round: plain sets, the single-registration shortcut of a
// derived chain (`feed`), compare-and-set updates, and transactions. A value is stored only by
// the holder of its graph's turn (see `PropagationGraph`); the rules are in the Threading and
// Ordering contract articles.

extension ReadOnlyObservable {
  /// Stores `newValue` and notifies, following the ordering rules on ``Observable``.
  final func send(_ newValue: Value) {
    store(newValue, ifVersion: nil)
  }

  /// Stores a derived observable's new value from inside its source's round (see `DerivedLink`).
  ///
  /// Such an observable is set only there, so its changes never re-enter it: while it is idle
  /// with at most one registration (a chain's next operator, or one binding) that wants only
  /// `.new`, that registration is called directly, without taking the deliverer role or running
  /// a round. A registration or
  /// removal from another thread meanwhile sees the stored value, as it would after a round.
  /// Anything else (more observers, queued work, a trace, a transaction) takes the full path.
  final func feed(_ newValue: Value) {
    ObservationContext.withCurrent { context in
      lock.lock()
      guard deliveryStorage != nil, FastPaths.areEnabled, !context.isInTransaction,
        delivery.state.role == .idle,
        delivery.observers.count <= 1, !delivery.hasTracer, !delivery.hasPending,
        !delivery.hasBoundaryWork, !delivery.needsCompaction, !delivery.hasCatchingUp
      else {
        lock.unlock()
        store(newValue, ifVersion: nil, in: context)
        return
      }
      // The storage lives as long as the observable, which the caller holds: no reference of
      // this call's own (a retain and a release per set of a chain's level).
      unowned(unsafe) let delivery = delivery
      guard delivery.observers.count == 1 else {
        // The replaced value is released after unlocking: its deinit may be user code.
        let replaced = storage
        storage = newValue
        delivery.version &+= 1
        if context.recordsValuesBefore { keepValueBeforeLocked(replaced, in: context) }
        lock.unlock()
        withExtendedLifetime(replaced) {}
        return
      }
      let entry = delivery.observers.base
      // The one weak load of this call; the strong reference keeps the owner alive for it, and
      // is let go only after unlocking (the last reference's release runs user code).
      let owner = entry.pointee.owner
      // One call only: an entry that wants `.old` takes a full round, whose `.new` pass skips it
      // if its `.old` callback removed it.
      guard !entry.pointee.wants(Entry.oldBit), entry.pointee.wants(Entry.newBit),
        entry.pointee.isToken || owner != nil
      else {
        // An entry that wants `.old`, a removed entry, or a dead owner: a full round delivers
        // it, or prunes it.
        lock.unlock()
        keepAlive(owner)
        store(newValue, ifVersion: nil, in: context)
        return
      }
      let replaced = storage
      storage = newValue
      delivery.version &+= 1
      if context.recordsValuesBefore { keepValueBeforeLocked(replaced, in: context) }
      let callback = entry.pointee.callback
      let isMainActorToken = entry.pointee.isMainActorToken
      lock.unlock()
      withExtendedLifetime(replaced) {}
      context.beginPropagation()
      defer { context.endPropagation() }
      // The call is this feed's last act, and so is each enclosing shortcut's: deep in a chain,
      // leave it to the outermost shortcut of the run, which makes the calls one after another
      // instead of one inside another. The order of the calls is the same.
      guard context.chainDepth < Self.chainDepthPerFrame else {
        // The only allocation of the shortcut, once per `chainDepthPerFrame` levels.
        context.deferredChainCall = {
          Self.callShortcut(callback, owner, isMainActorToken: isMainActorToken, newValue)
        }
        return
      }
      context.chainDepth += 1
      Self.callShortcut(callback, owner, isMainActorToken: isMainActorToken, newValue)
      if context.chainDepth == 1 {
        while let next = context.deferredChainCall {
          context.deferredChainCall = nil
          next()
        }
      }
      context.chainDepth -= 1
    }
  }

  /// The one call of `feed`'s shortcut, the fast path of ``call(_:_:_:)`` for the one
  /// registration it read under the lock: `.new` to it, whose owner (or, for a main-actor
  /// token, handle) `owner` keeps alive for the call.
  @inline(__always)
  private static func callShortcut(
    _ callback: Callback, _ owner: AnyObject?, isMainActorToken: Bool, _ newValue: Value
  ) {
    if isMainActorToken {
      // `owner` is its handle: no round decided where main-actor callbacks run.
      callThroughHandle(owner, newValue, .new)
    } else {
      callback(newValue, .new)
    }
    keepAlive(owner)
  }

  /// How many shortcut calls of a chain nest on the stack before the rest are made in a loop.
  private static var chainDepthPerFrame: Int { 32 }

  /// Reads the value, lets `body` modify a copy without the lock (it is user code), and stores
  /// the result as one propagation: the turn of the graph is taken first, so no other set can
  /// come in between. Should waiting for the turn risk a deadlock (see
  /// ``PropagationGraph/waitForTurn(on:)``), it stores only if no other set happened meanwhile,
  /// and otherwise runs `body` again on the newer value.
  final func sendUpdate(_ body: (inout Value) throws -> Void) rethrows {
    let context = ObservationContext.current
    let graph = propagationGraph
    // A transaction that could not take a turn makes its sets when it ends: waiting now could
    // close the cycle it broke.
    let isHolding =
      !(context.isInTransaction && context.isTransactionQueued)
      && context.takeTurn(of: graph) == .holding
    defer { if isHolding { context.giveBackTurnsIfOutside() } }
    while true {
      lock.lock()
      var candidate = storage
      let seen = delivery.version
      lock.unlock()
      try body(&candidate)
      if store(candidate, ifVersion: seen, in: context) { return }
    }
  }

  /// Stores `newValue` unless `expected` is given and the value changed since; then runs the
  /// round, or queues it if a round is already running. Inside a transaction the round waits for
  /// the transaction's end.
  @discardableResult
  func store(_ newValue: Value, ifVersion expected: UInt?) -> Bool {
    ObservationContext.withCurrent {
      store(newValue, ifVersion: expected, in: $0)
    }
  }

  @inline(__always)
  @discardableResult
  func store(
    _ newValue: Value, ifVersion expected: UInt?, in context: ObservationContext
  ) -> Bool {
    lock.lock()
    if deliveryStorage == nil {
      // Nobody ever registered: no round can run, nobody delivers and nothing is queued, so
      // the general path below would only store. A transaction needs the storage to join.
      guard FastPaths.areEnabled && !context.isInTransaction else {
        _ = makeDeliveryIfNeeded()
        return store(newValue, afterLockingIfVersion: expected, in: context)
      }
      // Only `sendUpdate` passes a version, and it made the storage to read it.
      assert(expected == nil, "a version was read from an observable without delivery storage")
      let replaced = storage
      storage = newValue
      lock.unlock()
      // Released after unlocking: its deinit may be user code.
      withExtendedLifetime(replaced) {}
      return true
    }
    return store(newValue, afterLockingIfVersion: expected, in: context)
  }

  /// ``store(_:ifVersion:in:)`` once the lock is held and the delivery storage exists:
  /// takes the graph's turn, unless this thread holds it already, then stores.
  @inline(__always)
  private func store(
    _ newValue: Value, afterLockingIfVersion expected: UInt?, in context: ObservationContext
  ) -> Bool {
    let graph = delivery.graph
    if context.isInTransaction && context.isTransactionQueued {
      lock.unlock()
      context.queueInTransaction { self.store(newValue, ifVersion: nil) }
      return true
    }
    if !context.holdsTurn(of: graph) {
      if graph.takeIfFree(by: context) {
        context.noteTaken(graph)
      } else {
        lock.unlock()
        let outcome = context.takeTurn(of: graph)
        guard outcome == .holding else {
          guard !context.isInTransaction else {
            context.queueTransaction(behind: graph, stuck: outcome == .stuck) {
              self.store(newValue, ifVersion: nil)
            }
            return true
          }
          return queuePropagation(of: newValue, in: graph, context: context)
        }
        lock.lock()
      }
    }
    if let expected, expected != delivery.version {
      lock.unlock()
      context.giveBackTurnsIfOutside()
      return false
    }
    let oldValue = storage
    storage = newValue
    delivery.version &+= 1
    if context.recordsValuesBefore && !context.isInTransaction {
      keepValueBeforeLocked(oldValue, in: context)
    }
    if context.isInTransaction {
      joinTransaction(of: context, storedOver: oldValue)
      return true
    }
    // A full round's calls are not the last act of the shortcuts around it: chains below it
    // start a run of their own.
    let chainDepth = context.chainDepth
    context.chainDepth = 0
    context.beginPropagation()
    startRound(old: oldValue, new: newValue, on: .current)
    context.endPropagation()
    context.chainDepth = chainDepth
    return true
  }

  /// Entered with the lock held after a set inside a transaction stored over `oldValue`; marks
  /// this observable as changed by the transaction (with the transaction's record, made under
  /// the lock so that a registration without the turn finds the value from before it), unlocks,
  /// and joins the transaction once. Out of line, so that a plain set carries none of it.
  @inline(never)
  private func joinTransaction(of context: ObservationContext, storedOver oldValue: Value) {
    let transaction = context.transaction
    let joined = delivery.joinedTransaction
    guard joined != transaction else { return lock.unlock() }
    guard joined == nil else {
      // Another transaction's mark is still here: join by identity, unmarked.
      lock.unlock()
      context.join(self) {
        TransactionRecord(observable: self, oldValue: oldValue, transaction: transaction)
      }
      return
    }
    let record = TransactionRecord(observable: self, oldValue: oldValue, transaction: transaction)
    delivery.joinedRecord = record
    lock.unlock()
    context.join(self, marked: true) { record }
  }

  /// Keeps `oldValue`, the value before this store, if it is this propagation's first store here
  /// (see ``ObservationContext/recordsValuesBefore``); lock held. Out of line: only a
  /// propagation in a graph with a `flatMapLatest` keeps values.
  @inline(never)
  final func keepValueBeforeLocked(_ oldValue: Value, in context: ObservationContext) {
    // A value kept is this propagation's, from an earlier store, or that of another thread's
    // propagation that has not ended: each propagation lets go of its own when it ends.
    guard delivery.valueBefore == nil else { return }
    let kept = ValueBefore(oldValue, tag: context.propagationOfStore, observable: self)
    delivery.valueBefore = kept
    context.noteValueBefore(kept)
  }

  /// The value from before the propagation `later` names, if it stored here: what a
  /// registration reads whose propagation goes before that one (see
  /// ``ObservationContext/goesBefore``); lock held.
  final func valueBeforeLocked(_ later: CrossedPropagation) -> Value? {
    guard let kept = delivery.valueBefore, kept.tag == later.tag else { return nil }
    return (kept.value as! Value)
  }

  /// Waiting for the turn could deadlock: queues the set, whole, to run on the holder's thread
  /// right after its propagation (see ``PropagationGraph/queue(_:)``). The value is stored then,
  /// not now. A turn given back meanwhile is taken, and the value stored at once.
  @inline(never)
  private func queuePropagation(
    of newValue: Value, in graph: PropagationGraph, context: ObservationContext
  ) -> Bool {
    if graph.queue({ self.store(newValue, ifVersion: nil) }) { return true }
    return store(newValue, ifVersion: nil, in: context)
  }

  /// Runs a transaction's round for this observable: from the value before the transaction to
  /// the current one. A transaction that ends inside a callback is nested like a set made there:
  /// its rounds never wait for a turn.
  final func commitTransaction(from oldValue: Value, of transaction: TransactionMark) {
    // The transaction took the graph's turn with its first set here, and holds it until now.
    lock.lock()
    let record = endJoinedTransactionLocked(transaction)
    // Kept from here on like a plain set's (its record kept it until now).
    let context = ObservationContext.current
    if context.recordsValuesBefore { keepValueBeforeLocked(oldValue, in: context) }
    startRound(old: oldValue, new: storage, on: .current)
    // Released without the lock: its value's deinit may be user code.
    withExtendedLifetime(record) {}
  }

  /// Undoes the stores of `transaction` into this observable, which no round has delivered yet:
  /// stores `oldValue` again, the value from before the transaction, and returns the
  /// transaction's last value (see ``ObservationContext/queueTransaction(behind:stuck:_:)``).
  final func undoTransaction(restoring oldValue: Value, of transaction: TransactionMark) -> Value {
    lock.lock()
    let value = storage
    storage = oldValue
    delivery.version &+= 1
    let record = endJoinedTransactionLocked(transaction)
    lock.unlock()
    withExtendedLifetime(record) {}
    return value
  }

  /// Clears the mark of `transaction`, if it marked this observable, and returns its record,
  /// for the caller to release after unlocking; lock held. Returned as `AnyObject`: keeping an
  /// optional of the generic record alive with `withExtendedLifetime` looks its metadata up.
  private func endJoinedTransactionLocked(_ transaction: TransactionMark) -> AnyObject? {
    guard let record = delivery.joinedRecord, record.transaction == transaction else {
      return nil
    }
    delivery.joinedRecord = nil
    return record
  }

  /// The value a registration that does not hold the graph's turn reads as `.initial`; lock
  /// held. While another thread's transaction has stored here and its round has not run, that
  /// is the value from before the transaction: the registration comes before it in the serial
  /// order, and its round (or its undoing) follows; the transaction's value would make the
  /// registration get, after `.initial`, the very change that `.initial` showed. Likewise, for
  /// a registration whose propagation goes before `later` (see
  /// ``ObservationContext/goesBefore``), the value from before `later` stored here.
  @inline(never)
  final func valueForRegistrationWithoutTurnLocked(goingBefore later: CrossedPropagation?)
    -> Value
  {
    if let later, let kept = valueBeforeLocked(later) { return kept }
    if let record = delivery.joinedRecord { return record.oldValue }
    return storage
  }

  /// Entered with the lock held after a change was stored; returns with it released once this
  /// thread has delivered what it must (see ``DeliveryState/set(on:queueIsEmpty:)``).
  private func startRound(old oldValue: Value, new newValue: Value, on thread: ThreadID) {
    // Recorded when stored, not when delivered: a change stored before a catching-up
    // registration joins is its, one stored after reaches it through the list or the queue.
    if delivery.hasCatchingUp { recordForCatchingUp(old: oldValue, new: newValue) }
    switch delivery.state.set(
      on: thread, queueIsEmpty: !delivery.hasBoundaryWork && !delivery.hasPending)
    {
    case .enqueue:
      enqueueChange(old: oldValue, new: newValue)
      lock.unlock()
    case .enqueueAndDrain:
      enqueueChange(old: oldValue, new: newValue)
      lock.unlock()
      drain()
    case .deliver:
      let tracer = delivery.tracer
      let lanes = delivery.hasMainActorLanes ? delivery.mainActorLanes : nil
      lock.unlock()
      deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
      drain()
    }
  }

  /// Records a change for the registrations catching up (see `registerCatchingUp`); lock held.
  @inline(never)
  func recordForCatchingUp(old oldValue: Value, new newValue: Value) {
    for registration in delivery.catchingUp {
      registration.record(old: oldValue, new: newValue)
    }
  }
}

/// The value an observable held before a propagation first stored into it (see
/// ``ObservationContext/recordsValuesBefore``).
///
/// Not generic, with the value boxed: in the unspecialized code of a set, making an instance of
/// a generic class, or an optional of one, looks up its type's metadata first (about 650
/// instructions per set here). Only a switch that goes before another propagation unboxes it.
final class ValueBefore {
  let value: Any
  let tag: PropagationTag
  /// The observable that keeps it, until the propagation ends.
  let observable: any ValueBeforeKeeping
  /// The value the same propagation kept before this one (see
  /// ``ObservationContext/noteValueBefore(_:)``); only that thread touches it.
  @exclusivity(unchecked) var previous: ValueBefore?

  init(_ value: Any, tag: PropagationTag, observable: any ValueBeforeKeeping) {
    self.value = value
    self.tag = tag
    self.observable = observable
  }
}

extension ReadOnlyObservable: ValueBeforeKeeping {
  func forget(_ kept: ValueBefore) {
    lock.lock()
    if delivery.valueBefore === kept { delivery.valueBefore = nil }
    lock.unlock()
    // The caller's reference outlives the lock: the value's deinit may be user code.
  }
}

/// A change stored inside a transaction, whose round runs when the transaction ends; the
/// observable it marked also keeps it until then (see `DeliveryStorage.joinedRecord`).
final class TransactionRecord<Value>: TransactionParticipant {
  let observable: ReadOnlyObservable<Value>
  let oldValue: Value
  let transaction: TransactionMark

  init(observable: ReadOnlyObservable<Value>, oldValue: Value, transaction: TransactionMark) {
    self.observable = observable
    self.oldValue = oldValue
    self.transaction = transaction
  }

  func commitTransaction() {
    observable.commitTransaction(from: oldValue, of: transaction)
  }

  func undoTransaction() -> (() -> Void)? {
    let value = observable.undoTransaction(restoring: oldValue, of: transaction)
    return { [observable] in observable.store(value, ifVersion: nil) }
  }
}
