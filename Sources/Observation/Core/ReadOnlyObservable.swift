import Dispatch

/// A value that can be read and observed but not set: the common base of ``Observable`` and of
/// every derived observable (`map(_:)`, `removeDuplicates()`, `combineLatest(_:_:)`).
///
/// Everything here behaves as described on ``Observable``: weak owners, options, rounds in
/// registration order, queued re-entrant changes, and callbacks on the delivering thread. Accept
/// a `ReadOnlyObservable` where you only need to watch a value:
///
/// ```swift
/// func show(_ progress: ReadOnlyObservable<Double>) {
///   progress.addObserver(self, options: [.initial, .new]) { fraction, _ in
///     print("\(Int(fraction * 100))%")
///   }
/// }
/// show(download.progress)  // an Observable<Double>
/// ```
///
/// The class cannot be subclassed outside this module.
public class ReadOnlyObservable<Value> {
  typealias Entry = ObserverEntry<Value>
  typealias NewEntry = ObserverEntry<Value>.Draft
  typealias Callback = (Value, ObservableOptions) -> Void

  /// Work that arrives while a round is running, applied in arrival order between rounds.
  private enum PendingEvent {
    /// A stored change and the thread that delivers it: `nil` for the delivery queue (a set made
    /// inside a callback while another thread delivered), `.anyDeliverer` for whoever holds the
    /// role (a setter that stopped waiting).
    case change(old: Value, new: Value, setter: ThreadID?)
    case add(Entry)
    /// A registration whose `.initial` runs on another thread (see ``DeliveryState``).
    case gated(Gate<Value>)
    case cancelled

    /// The entry of a queued registration that is still to be applied.
    var registration: Entry? {
      switch self {
      case .add(let entry): entry
      case .gated(let gate) where !gate.isCancelled: gate.entry
      case .gated, .change, .cancelled: nil
      }
    }
  }

  private let lock = Lock()
  /// ``ObservationContext/slot``, read once here instead of behind a `swift_once` on every set.
  private let contextSlot = ObservationContext.slot

  // Every property below is guarded by `lock`, with one exception that makes delivery cheap:
  // while a thread is the deliverer (see `state`), only that thread changes `observers` (always
  // under the lock), so it may also read `observers` without the lock. Other threads queue
  // their changes instead. Dynamic exclusivity checks would cost more than a delivery and cannot
  // see the lock, hence `@exclusivity(unchecked)`.
  @exclusivity(unchecked) private var storage: Value
  @exclusivity(unchecked) private var version: UInt = 0
  @exclusivity(unchecked) private var observers = ObserverList<Value>()
  @exclusivity(unchecked) private var state = DeliveryState()
  @exclusivity(unchecked) private var pending = WorkQueue<PendingEvent>()
  /// Whether `pending` holds work. Checked instead of `pending` itself because any use of the
  /// generic queue costs a metadata look-up, which would dominate a set that queues nothing.
  @exclusivity(unchecked) private var hasPending = false
  /// How many registrations `pending` holds that are neither applied nor cancelled, and where
  /// each token's or binding's waits (a position in `pending`), keyed by its identity.
  @exclusivity(unchecked) private var queuedRegistrationCount = 0
  @exclusivity(unchecked) private var queuedRegistrations: [UInt: Int] = [:]
  /// Whether the deliverer has work to do before its next round: removals from other threads,
  /// or gated registrations to catch up.
  @exclusivity(unchecked) private var hasBoundaryWork = false
  @exclusivity(unchecked) private var deferredRemovals: [Selection] = []
  /// Removals made while a thread delivers, kept until the deliverer gives up its role (by then
  /// the removed closures, and so their main-actor handles, are released): a main-actor call
  /// already waiting for the main queue checks them before it runs. Each ends only the
  /// registrations made before it (``MainActorHandle/serial`` below `before`), so an owner that
  /// registers again at once is not taken for its ended registration.
  @exclusivity(unchecked) private var endedDuringDelivery: [(selection: Selection, before: UInt)] =
    []
  /// The serial of the next main-actor handle.
  @exclusivity(unchecked) private var nextHandleSerial: UInt = 0
  /// Registrations the deliverer has reached behind a gate that was still closed, with the
  /// rounds they missed: they join the list, in order, once every gate among them is open and
  /// they are caught up (see ``HeldRegistrations``).
  @exclusivity(unchecked) private var held: HeldRegistrations<Value>?
  /// The held registrations the deliverer is catching up right now: a removal still finds them.
  @exclusivity(unchecked) private var catchingUp: HeldRegistrations<Value>?
  /// Whether `held` or `catchingUp` is set: checked instead of them on every registration and
  /// removal, since reading a generic optional costs a metadata look-up.
  @exclusivity(unchecked) private var hasHeldRegistrations = false
  @exclusivity(unchecked) private var needsCompaction = false
  /// Setters from other threads waiting for their turn.
  @exclusivity(unchecked) private var waiters: [TurnWaiter] = []
  /// Counts rounds and hand-overs, so a waiting setter can tell a slow turn from a stuck one.
  @exclusivity(unchecked) private var progress: UInt = 0
  @exclusivity(unchecked) private var tracer: Tracer?
  /// The lanes of this observable's main-actor registrations, one per main scheduler (almost
  /// always just `.main`); they only ever grow. A round takes a copy under the lock.
  @exclusivity(unchecked) private var mainActorLanes: [any RoundLane] = []
  /// The lanes of this observable's registrations made on other actors, one per actor.
  @exclusivity(unchecked) private var actorLanes: [ActorLane<Call<Value>>] = []
  /// Whether `mainActorLanes` is not empty, checked instead of it so that an observable without
  /// main-actor registrations pays nothing per round.
  @exclusivity(unchecked) private var hasMainActorLanes = false

  init(initialValue: Value) {
    storage = initialValue
  }

  deinit {
    // Nothing else can reach the observable now, so releasing the closures here runs no user
    // code under the lock.
    observers.deallocate()
    lock.deallocate()
  }

  /// The current value.
  ///
  /// Reading returns the latest value set, from any thread, even while an earlier change is still
  /// being delivered; callbacks receive the value of their own round as an argument.
  public var value: Value {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }

  // MARK: - Managing observers

  /// Registers `closure` to be called on changes while `observer` is alive.
  ///
  /// The observable holds `observer` weakly and never calls `closure` after `observer` has been
  /// deallocated, not even on the first change after its death; the registration is pruned
  /// automatically. If `closure` captures `observer` strongly, it keeps it alive: use
  /// ``observe(with:options:isolation:_:)`` to get the owner as an argument instead.
  ///
  /// ```swift
  /// user.name.addObserver(self, options: [.initial, .new]) { name, option in
  ///   print("User's name is \(name)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - observer: The owner of the registration, held weakly.
  ///   - removeIfExists: When `true` (the default), the owner's earlier `addObserver`
  ///     registrations on this observable are removed first, so the new one replaces them and
  ///     moves to the end of the order. Its other registrations (key-path bindings,
  ///     ``observe(with:options:isolation:_:)``) stay. When `false`, the new registration is added beside
  ///     the earlier ones.
  ///   - options: Which callbacks to deliver; `[.new]` by default. An empty set is accepted, and
  ///     such a registration is never called.
  ///   - isolation: Where `closure` runs: by default the isolation of the calling code (the
  ///     main actor in a `@MainActor` type, an actor in its methods, none in nonisolated code).
  ///     See the Threading article.
  ///   - closure: Receives the value and the single option being delivered, in `isolation`.
  public final func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    closure: @escaping (Value, ObservableOptions) -> Void
  ) {
    register(
      NewEntry(
        owner: observer,
        options: options,
        callback: CallbackIsolation(isolation).confine(
          closure, owner: observer, key: .replaceable(ownedBy: observer), on: self)
      ),
      replacing: removeIfExists,
      initial: options.contains(.initial) ? closure : nil
    )
  }

  /// The lane of this observable's main-actor registrations made under the current
  /// ``MainScheduler``: shared by all of them, so that calls that wait for the main queue run in
  /// the order of rounds and, within a round, of registrations.
  ///
  /// - Returns: The lane, and the serial of the handle about to be made for it (see
  ///   `endedDuringDelivery`).
  final func mainActorLane() -> (lane: MainQueueLane<Value, MainActorCall>, serial: UInt) {
    let scheduler = MainScheduler.current
    lock.lock()
    defer { lock.unlock() }
    let serial = nextHandleSerial
    nextHandleSerial &+= 1
    for case let lane as MainQueueLane<Value, MainActorCall> in mainActorLanes
    where lane.scheduler.isSame(as: scheduler) {
      return (lane, serial)
    }
    let lane = MainQueueLane<Value, MainActorCall>(
      scheduler: scheduler,
      deliversBacklogInline: true
    ) { [weak self] in
      guard let self else { return nil }
      return { value, call in self.runWaitingCall(value, call) }
    }
    mainActorLanes.append(lane)
    hasMainActorLanes = true
    return (lane, serial)
  }

  /// Runs a main-actor call that waited in the lane, on the main actor, unless its registration
  /// has ended since it was queued: its closure was released (the call's handle is gone), or a
  /// removal was made while another thread delivered (``hasEnded(_:)``). For a handle that a
  /// removal can end, the handle is loaded under the lock, so a removal and the release that
  /// follows it cannot both be missed; a token's handle is never ended by a removal (cancelling
  /// releases it), so its calls do not take the lock, which the producer of the values holds
  /// for part of every set.
  final func runWaitingCall(_ value: UnsafePointer<Value>, _ call: UnsafePointer<MainActorCall>) {
    let handle: MainActorCallTarget?
    if call.pointee.endsByRemoval {
      lock.lock()
      let loaded = call.pointee.target.handle
      let isLive = loaded.map { !hasEnded($0) } ?? false
      lock.unlock()
      // Released here, if it is the last reference, outside the lock.
      handle = isLive ? loaded : nil
    } else {
      handle = call.pointee.target.handle
    }
    handle?.runWaiting(UnsafeRawPointer(value), call.pointee.option)
  }

  /// Whether a removal made during the current delivery selects `key`'s registration, lock held.
  /// Such a registration stays in the list until the deliverer's next round boundary, but its
  /// waiting main-actor calls must not run once the removing call has returned.
  private func hasEnded(_ handle: MainActorCallTarget) -> Bool {
    !endedDuringDelivery.isEmpty && handle.isEnded(by: endedDuringDelivery)
  }

  /// The lane of this observable's registrations made on `actor`: shared by all of them, so that
  /// their calls run in the order of rounds and, within a round, of registrations. Lanes whose
  /// actor is gone are dropped here.
  final func actorLane(for actor: any Actor) -> ActorLane<Call<Value>> {
    let (lane, dropped): (ActorLane<Call<Value>>, [ActorLane<Call<Value>>]) = lock.withLock {
      let dropped = actorLanes.filter { !$0.isAlive }
      actorLanes.removeAll { !$0.isAlive }
      if let lane = actorLanes.first(where: { $0.runs(on: actor) }) { return (lane, dropped) }
      let lane = ActorLane<Call<Value>>(actor: actor) { call in
        call.target?.run(call.value, call.option)
      }
      actorLanes.append(lane)
      return (lane, dropped)
    }
    // Released after unlocking: a dropped lane may still hold values, whose deinit is user code.
    withExtendedLifetime(dropped) {}
    return lane
  }

  /// Removes every registration owned by `observer`: its `addObserver` and
  /// ``observe(with:options:isolation:_:)`` registrations and its key-path bindings from this observable.
  ///
  /// Removing an owner that has no registration does nothing. Called from a callback, the removed
  /// registrations are not called for the rest of the current round; called from another thread
  /// while a round is running, they are not called for any later round.
  ///
  /// - Parameter observer: The owner passed to ``addObserver(_:removeIfExists:options:isolation:closure:)``
  ///   or ``observe(with:options:isolation:_:)``.
  public final func removeObserver(_ observer: AnyObject) {
    remove(.owner(Entry.identity(of: observer)))
  }

  /// The number of registrations that can still be called.
  ///
  /// Registrations whose owner has been deallocated are not counted, even before they are
  /// pruned. Registrations queued from another thread during a round are counted once that round
  /// ends.
  ///
  /// - Complexity: O(*n*) in the number of registrations.
  public final var observerCount: Int {
    lock.withLock { observers.liveCount }
  }

  /// The slots the queue of pending work holds on to, for tests of its memory.
  final var pendingCapacity: Int {
    lock.withLock { pending.capacity }
  }

  // MARK: - Setting (for Observable and derived observables)

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
    ObservationContext.withCurrent(slot: contextSlot) { context in
      lock.lock()
      guard FastPaths.areEnabled, !context.isInTransaction, state.role == .idle,
        observers.count <= 1, tracer == nil, !hasPending, !hasBoundaryWork, !needsCompaction
      else {
        lock.unlock()
        store(newValue, ifVersion: nil, in: context)
        return
      }
      guard observers.count == 1 else {
        // The replaced value is released after unlocking: its deinit may be user code.
        let replaced = storage
        storage = newValue
        version &+= 1
        lock.unlock()
        withExtendedLifetime(replaced) {}
        return
      }
      let entry = observers.base
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
      version &+= 1
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

  /// The one call of `feed`'s shortcut: `.new` to the only registration, whose owner (or, for a
  /// main-actor token, handle) `owner` keeps alive for the call.
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
  /// the result only if no other set happened meanwhile; otherwise it runs `body` again on the
  /// newer value.
  final func sendUpdate(_ body: (inout Value) throws -> Void) rethrows {
    while true {
      lock.lock()
      var candidate = storage
      let seen = version
      lock.unlock()
      try body(&candidate)
      if store(candidate, ifVersion: seen) { return }
    }
  }

  /// Stores `newValue` unless `expected` is given and the value changed since; then runs the
  /// round, or queues it if a round is already running. Inside a transaction the round waits for
  /// the transaction's end.
  @discardableResult
  private func store(_ newValue: Value, ifVersion expected: UInt?) -> Bool {
    ObservationContext.withCurrent(slot: contextSlot) {
      store(newValue, ifVersion: expected, in: $0)
    }
  }

  @inline(__always)
  @discardableResult
  private func store(
    _ newValue: Value, ifVersion expected: UInt?, in context: ObservationContext
  ) -> Bool {
    lock.lock()
    if let expected, expected != version {
      lock.unlock()
      return false
    }
    let oldValue = storage
    storage = newValue
    version &+= 1
    if context.isInTransaction {
      lock.unlock()
      context.join(self) { TransactionRecord(observable: self, oldValue: oldValue) }
      return true
    }
    // Inside a callback (of any observable) this thread must not wait for a turn.
    let isNested = context.propagationDepth > 0 || context.isFlushing
    // A full round's calls are not the last act of the shortcuts around it: chains below it
    // start a run of their own.
    let chainDepth = context.chainDepth
    context.chainDepth = 0
    context.beginPropagation()
    startRound(old: oldValue, new: newValue, isNested: isNested)
    context.endPropagation()
    context.chainDepth = chainDepth
    return true
  }

  /// Runs a transaction's round for this observable: from the value before the transaction to
  /// the current one. A transaction that ends inside a callback is nested like a set made there:
  /// its rounds never wait for a turn.
  final func commitTransaction(from oldValue: Value) {
    // The transaction's end opened a propagation of its own around its rounds.
    let isNested = ObservationContext.withCurrent(slot: contextSlot) { context in
      context.propagationDepth > 1 || context.isFlushing
    }
    lock.lock()
    startRound(old: oldValue, new: storage, isNested: isNested)
  }

  /// Entered with the lock held after a change was stored; returns with it released once this
  /// thread has delivered what it must (see `DeliveryState`).
  private func startRound(old oldValue: Value, new newValue: Value, isNested: Bool) {
    let thread = ThreadID.current
    switch state.set(on: thread) {
    case .enqueue:
      enqueueChange(old: oldValue, new: newValue, setter: thread)
      lock.unlock()
    case .enqueueAndWait where isNested:
      // For the delivery queue (see `DeliveryState`): waiting here could close a cycle, however
      // long the queue is.
      enqueueChange(old: oldValue, new: newValue, setter: nil)
      lock.unlock()
    case .enqueueAndWait:
      enqueueChange(old: oldValue, new: newValue, setter: thread)
      let waiter = TurnWaiter(thread: thread)
      waiters.append(waiter)
      lock.unlock()
      if waitForTurn(waiter) { drain() }
    case .deliver:
      if hasBoundaryWork || hasPending {
        // Gated registrations wait for this round too, and registrations queued behind a gate
        // come before it: let the queue carry it.
        enqueueChange(old: oldValue, new: newValue, setter: thread)
        lock.unlock()
      } else {
        let tracer = tracer
        let lanes = hasMainActorLanes ? mainActorLanes : nil
        lock.unlock()
        deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
      }
      drain()
    }
  }

  // MARK: - Registration and removal (shared by every way of observing)

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
      if state.role == .idle && !hasPending && !hasHeldRegistrations {
        if !replacing && observers.hasRoom {
          observers.appendAssumingRoom(draft)
          lock.unlock()
          return
        }
        if replacing && observers.reserveIndexedSlot(for: draft.identity) {
          observers.appendAssumingRoom(draft, indexed: true)
          lock.unlock()
          return
        }
        var replaced: Callback?
        if replacing && observers.reserveSlot(replacingEntryOf: draft.identity, replaced: &replaced)
        {
          observers.appendAssumingRoom(draft, indexed: true)
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
    if replacing { removeLocked(.replaceable(draft.identity), released: &released) }
    guard !draft.isRemoved else {
      // Nothing to keep: `.initial` alone needs no place in the order.
      let value = storage
      lock.unlock()
      releaseOutsideLock(&released)
      initial?(value, .initial)
      return
    }
    switch state.register(on: .current, sendsInitial: initial != nil) {
    case .append:
      observers.append(draft, released: &released)
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
    let gate = Gate(entry: entry)
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
    lock.withLock { removeLocked(selection, slotHint: token?.slot, released: &released) }
    releaseOutsideLock(&released)
  }

  /// Removal with the lock held. Closures that may be released now go to `released`.
  private func removeLocked(
    _ selection: Selection,
    slotHint: Int? = nil,
    released: inout [Callback]
  ) {
    if hasPending { cancelQueuedAdds(selection, released: &released) }
    if hasHeldRegistrations { cancelHeldRegistrations(selection, released: &released) }
    let action = state.remove(on: .current)
    if action != .removeNow && hasMainActorLanes {
      endedDuringDelivery.append((selection, before: nextHandleSerial))
    }
    switch action {
    case .removeNow:
      observers.remove(selection, slotHint: slotHint, released: &released, taking: true)
    case .mark:
      if observers.remove(selection, slotHint: slotHint, released: &released, taking: false) {
        needsCompaction = true
      }
    case .deferToNextRound:
      deferredRemovals.append(selection)
      hasBoundaryWork = true
    }
  }

  /// Queues a registration made during a round, remembering where a token's or a binding's
  /// waits so that cancelling it costs O(1) (see ``cancelQueuedAdds(_:released:)``).
  private func enqueueRegistration(_ event: PendingEvent, of entry: Entry) {
    enqueue(event)
    queuedRegistrationCount += 1
    if entry.kindBits >= Entry.handleKind {
      queuedRegistrations[entry.identity] = pending.positionOfNewest
    }
  }

  /// Cancels the queued registrations `selection` names. A token or a binding finds its own in
  /// O(1), and when it is the newest queued event (a registration cancelled before anything was
  /// queued behind it) it leaves the queue at once, so churn from one thread cannot grow the
  /// queue while another thread delivers. An owner's are found by a scan, made only while
  /// registrations are queued.
  @inline(never)
  private func cancelQueuedAdds(_ selection: Selection, released: inout [Callback]) {
    guard queuedRegistrationCount > 0 else { return }
    guard case .handle(let identity) = selection else {
      pending.updateEach { event in
        guard let entry = event.registration, entry.isSelected(by: selection) else { return event }
        if entry.kindBits >= Entry.handleKind { queuedRegistrations[entry.identity] = nil }
        return cancelled(event, released: &released)
      }
      return
    }
    guard let position = queuedRegistrations.removeValue(forKey: identity) else { return }
    if position == pending.positionOfNewest {
      _ = cancelled(pending.removeLast(), released: &released)
      hasPending = !pending.isEmpty
    } else {
      pending.update(at: position) { cancelled($0, released: &released) }
    }
  }

  /// A queued registration's event once cancelled: an entry's closure goes to `released`; a gate
  /// stays, cancelled, for its registering thread to open.
  private func cancelled(_ event: PendingEvent, released: inout [Callback]) -> PendingEvent {
    queuedRegistrationCount -= 1
    switch event {
    case .add(var entry):
      released.append(entry.takeCallback(leaving: observers.vacantCallback))
      return .cancelled
    case .gated(let gate):
      // Its `.initial` runs the registering thread's own reference to the closure.
      gate.cancel(released: &released, leaving: observers.vacantCallback)
      return event
    case .change, .cancelled:
      preconditionFailure("Only a queued registration can be cancelled.")
    }
  }

  /// Cancels the held registrations `selection` names and releases their closures at once, even
  /// in a segment being caught up: the catch-up calls a copy of the entry, which keeps the
  /// closure it runs alive for that call.
  private func cancelHeldRegistrations(_ selection: Selection, released: inout [Callback]) {
    for segment in [held, catchingUp] {
      for gate in segment?.gates ?? [] where gate.entry.isSelected(by: selection) {
        gate.cancel(released: &released, leaving: observers.vacantCallback)
      }
    }
  }

  // MARK: - Gated registrations

  /// Called by the registering thread once `.initial` has returned.
  private func openGate(_ gate: Gate<Value>) {
    lock.lock()
    gate.isOpen = true
    let missedRounds = held.map { $0.isReady && !$0.backlog.isEmpty } ?? false
    switch state.openGate(on: .current, missedRounds: missedRounds) {
    case .leaveToDeliverer:
      hasBoundaryWork = true
      lock.unlock()
    case .applyRegistrations:
      // Nothing runs: what is queued behind this gate, and held registrations that missed no
      // round, join the list now, in order, up to the next closed gate.
      var released: [Callback] = []
      if let segment = held, segment.isReady {
        held = nil
        hasHeldRegistrations = catchingUp != nil
        hasBoundaryWork = false
        for gate in segment.gates { join(gate, released: &released) }
      }
      if held == nil {
        while let event = pending.first, apply(event, released: &released) {
          didDequeue(pending.popFirst().unsafelyUnwrapped)
        }
        hasPending = !pending.isEmpty
      }
      lock.unlock()
      releaseOutsideLock(&released)
    case .catchUp:
      hasBoundaryWork = true
      lock.unlock()
      drain()
    }
  }

  /// Adds a held registration's entry to the list, or releases the closure of a cancelled one;
  /// lock held.
  private func join(_ gate: Gate<Value>, released: inout [Callback]) {
    if !gate.isCancelled && gate.entry.isLive {
      observers.append(gate.entry, released: &released)
    } else {
      released.append(gate.takeCallback(leaving: observers.vacantCallback))
    }
  }

  // MARK: - Delivery

  /// Applies queued work in arrival order, running a round for each queued change, until the
  /// queue is empty; then gives up the deliverer role. Only the deliverer calls this.
  private func drain(onQueue: Bool = false) {
    lock.lock()
    guard hasPending || hasBoundaryWork || needsCompaction else {
      endedDuringDelivery.removeAll()
      state.finish(on: .current)
      lock.unlock()
      return
    }
    drainQueue(onQueue: onQueue)
  }

  /// The delivery queue's job: takes the role it was handed and delivers what nobody waits for.
  fileprivate func runDeliveryQueueJob() {
    let context = ObservationContext.current
    context.beginPropagation()
    lock.lock()
    state.adoptQueuedRole(on: .current)
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
    while true {
      state.requireDeliverer(thread)
      if needsCompaction {
        // Entries the last round marked (removed in a callback, dead owners) go now, so their
        // closures, and what those own, are released before the next round, not at the end.
        // Dropping the marked ones is enough: `compact()` would load every owner's weak
        // reference again (~50 instructions each), which made churn cost 1.2x the floor.
        applyDeferredRemovals(released: &released)
        observers.removeMarked(released: &released)
        needsCompaction = false
      }
      if hasBoundaryWork, let catchUp = boundaryWork(released: &released) {
        lock.unlock()
        releaseOutsideLock(&released)
        catchUp.deliver()
        lock.lock()
        continue
      }
      guard let event = pending.first else {
        guard released.isEmpty && !needsCompaction else {
          // Let go of removed closures while still holding the role: the registrations they
          // own (a token in a closure) end before any later round can start.
          lock.unlock()
          releaseOutsideLock(&released)
          lock.lock()
          continue
        }
        break
      }
      var deliveredFor: ThreadID?
      if case .change(_, _, let setter) = event, setter != thread, setter != .anyDeliverer {
        // This thread delivers its own changes, and what was queued before them, itself: a
        // deliverer never waits for a turn (inside a callback a cycle of waits could close, and
        // elsewhere it would only trade places with the waiting thread). So it delivers a waiting
        // thread's change for it when one of its own re-entrant changes is queued behind, and
        // hands the role over otherwise.
        let ownChangeIsQueued = pending.contains { Self.isChange($0, by: thread) }
        if let setter {
          if ownChangeIsQueued {
            deliveredFor = setter
          } else {
            handOver(to: setter, released: &released)
            return
          }
        } else if !onQueue && !ownChangeIsQueued {
          // Nobody waits for it: the delivery queue takes it.
          handOver(to: .deliveryQueue, released: &released)
          return
        }
      }
      didDequeue(pending.popFirst().unsafelyUnwrapped)
      switch event {
      case .change(let oldValue, let newValue, _):
        held?.backlog.append((oldValue, newValue))
        let tracer = tracer
        let lanes = hasMainActorLanes ? mainActorLanes : nil
        lock.unlock()
        releaseOutsideLock(&released)
        deliverRound(old: oldValue, new: newValue, tracer: tracer, lanes: lanes)
        lock.lock()
        progress &+= 1
        if let deliveredFor, let index = waiters.firstIndex(where: { $0.thread == deliveredFor }) {
          // Its setter may return: its change has been delivered.
          let waiter = waiters.remove(at: index)
          waiter.isDelivered = true
          waiter.semaphore.signal()
        }
      case .add, .gated, .cancelled:
        if let gate = heldGate(for: event) {
          // Behind a closed gate: held, with the rounds from here on kept for it, so that its
          // place in the order is kept.
          if held == nil { held = HeldRegistrations() }
          held.unsafelyUnwrapped.hold(gate)
          hasHeldRegistrations = true
          hasBoundaryWork = true
        } else {
          _ = apply(event, released: &released)
        }
      }
    }
    hasPending = false
    #if DEBUG
      observers._checkInvariants()
    #endif
    endedDuringDelivery.removeAll()
    state.finish(on: thread)
    lock.unlock()
  }

  /// Applies a queued registration, lock held: adds its entry to the list, or releases the
  /// closure of a cancelled one. Returns `false`, applying nothing, for a gate that is still
  /// closed (its `.initial` runs on another thread).
  private func apply(_ event: PendingEvent, released: inout [Callback]) -> Bool {
    switch event {
    case .add(let entry):
      observers.append(entry, released: &released)
    case .gated(let gate):
      guard gate.isOpen else { return false }
      if !gate.entry.isRemoved {
        observers.append(gate.entry, released: &released)
      } else {
        released.append(gate.takeCallback(leaving: observers.vacantCallback))
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
  fileprivate func applyDeferredRemovals(released: inout [Callback]) {
    guard !deferredRemovals.isEmpty else { return }
    for selection in deferredRemovals {
      observers.remove(selection, released: &released, taking: true, compacting: false)
    }
    deferredRemovals.removeAll()
    observers.removeMarkedIfWorthIt(released: &released)
  }

  /// What the deliverer does between rounds, lock held: applies removals from other threads and
  /// returns the held registrations to catch up, once every gate among them is open (delivered
  /// after unlocking).
  private func boundaryWork(released: inout [Callback]) -> CatchUp? {
    applyDeferredRemovals(released: &released)
    guard let segment = held else {
      hasBoundaryWork = false
      return nil
    }
    // A closed gate keeps the flag up: every round must be kept for it.
    guard segment.isReady else { return nil }
    held = nil
    catchingUp = segment
    hasBoundaryWork = false
    return CatchUp(segment: segment, observable: self)
  }

  /// For a queued registration the deliverer reaches, the gate that holds it back: its own gate
  /// if still closed, or a new open one when registrations are already held (it must come after
  /// them); `nil` when it may join the list now. Lock held.
  private func heldGate(for event: PendingEvent) -> Gate<Value>? {
    switch event {
    case .gated(let gate) where !gate.isOpen || held != nil: return gate
    case .add(let entry) where held != nil: return Gate(entry: entry, isOpen: true)
    default: return nil
    }
  }

  /// Delivers the rounds held registrations missed, round by round and in registration order
  /// within a round (each from the round after its registration), then adds them to the list.
  private struct CatchUp {
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
      observable.catchingUp = nil
      observable.hasHeldRegistrations = observable.held != nil
      observable.lock.unlock()
      releaseOutsideLock(&released)
    }

    private func call(
      _ gate: Gate<Value>, _ value: Value, _ option: ObservableOptions, bit: UInt
    ) {
      // A copy, read under the lock: it keeps the closure alive for this call even if a removal
      // releases the gate's own reference meanwhile.
      let entry = observable.lock.withLock { gate.entry }
      // A cancelled gate's entry is marked removed: it wants nothing.
      guard entry.wants(bit) else { return }
      if entry.isMainActorToken {
        ReadOnlyObservable.callThroughHandle(entry.owner, value, option)
      } else if entry.isToken {
        entry.callback(value, option)
      } else if let owner = entry.owner {
        entry.callback(value, option)
        keepAlive(owner)
      }
    }
  }

  /// Runs one round, then reports it to `tracer`. Only the deliverer calls this, without the
  /// lock.
  private func deliverRound(
    old oldValue: Value,
    new newValue: Value,
    tracer: Tracer?,
    lanes: [any RoundLane]?
  ) {
    // Whether the main-actor registrations run inline is decided once for the whole round.
    // Without lanes there is no main-actor registration to ask about.
    var mainActorInline = lanes != nil
    if let lanes {
      for lane in lanes where !lane.beginRound() { mainActorInline = false }
    }
    defer {
      if let lanes {
        for lane in lanes { lane.endRound() }
      }
    }
    var outcome = RoundOutcome()
    // Two copies of the passes: only a traced round counts its calls, so the common one keeps
    // no counter in its loop.
    if tracer == nil {
      deliverPasses(
        old: oldValue, new: newValue, mainActorInline: mainActorInline, counting: false,
        outcome: &outcome)
    } else {
      deliverPasses(
        old: oldValue, new: newValue, mainActorInline: mainActorInline, counting: true,
        outcome: &outcome)
    }
    if let tracer {
      tracer.handler(
        RoundTrace(
          name: tracer.name,
          oldValue: String(describing: oldValue),
          newValue: String(describing: newValue),
          callbackCount: outcome.calls,
          prunedCount: outcome.pruned))
    }
  }

  /// The `.old` pass (when some entry wants it), then the `.new` pass, of one round.
  @inline(__always)
  private func deliverPasses(
    old oldValue: Value,
    new newValue: Value,
    mainActorInline: Bool,
    counting: Bool,
    outcome: inout RoundOutcome
  ) {
    // Stable for the whole round: appends are queued while a round runs, and removals only mark.
    let base = observers.base
    let count = observers.count
    let directTokens = Entry.DirectTokenTest(mainActorInline: mainActorInline)
    if observers.oldCount > 0 {
      for index in 0..<count {
        deliver(
          oldValue, .old, bit: Entry.oldBit, to: base + index, directTokens: directTokens,
          counting: counting, outcome: &outcome)
      }
    }
    for index in 0..<count {
      deliver(
        newValue, .new, bit: Entry.newBit, to: base + index, directTokens: directTokens,
        counting: counting, outcome: &outcome)
    }
  }

  @inline(__always)
  private func deliver(
    _ value: Value,
    _ option: ObservableOptions,
    bit: UInt,
    to entry: UnsafeMutablePointer<Entry>,
    directTokens: Entry.DirectTokenTest,
    counting: Bool,
    outcome: inout RoundOutcome
  ) {
    // A token that wants this pass and may be called here (nonisolated, or main-actor in a
    // round that runs them inline): one test of the word before the call.
    if entry.pointee.passes(directTokens, wanting: bit) {
      entry.pointee.callback(value, option)
      if counting { outcome.calls &+= 1 }
      return
    }
    guard entry.pointee.wants(bit) else { return }
    if entry.pointee.isToken {
      // The test above passes every other token that wants this pass: this is a main-actor
      // token in a round that does not run them inline.
      assert(entry.pointee.isMainActorToken, "A token the round may call directly was missed.")
      Self.callThroughHandle(entry.pointee.owner, value, option)
      if counting { outcome.calls &+= 1 }
    } else if let owner = entry.pointee.owner {
      // The one weak load per delivery; the strong reference keeps the owner alive for the call.
      entry.pointee.callback(value, option)
      keepAlive(owner)
      if counting { outcome.calls &+= 1 }
    } else {
      lock.lock()
      observers.markRemoved(at: entry - observers.base)
      needsCompaction = true
      lock.unlock()
      outcome.pruned &+= 1
    }
  }

  /// Calls a main-actor token registration that may not run here: through its handle, which
  /// is `handle` (the entry's weak `owner` slot; `nil` once its token is gone).
  @inline(never)
  private static func callThroughHandle(
    _ handle: AnyObject?, _ value: Value, _ option: ObservableOptions
  ) {
    guard let handle else { return }
    unsafeDowncast(handle, to: MainActorHandle<Value>.self).dispatch(value, option)
  }

  // MARK: - Tracing

  /// Starts or (with `nil`) stops reporting rounds; see ``trace(as:_:)``.
  final func setTracer(_ newTracer: Tracer?) {
    let previous: Tracer? = lock.withLock {
      defer { tracer = newTracer }
      return tracer
    }
    withExtendedLifetime(previous) {}
  }

  // MARK: - Queue helpers (lock held)

  /// Forgets a queued registration that left the queue without being cancelled.
  private func didDequeue(_ event: PendingEvent) {
    guard let entry = event.registration else { return }
    queuedRegistrationCount -= 1
    if entry.kindBits >= Entry.handleKind { queuedRegistrations[entry.identity] = nil }
  }

  private func enqueue(_ event: PendingEvent) {
    pending.append(event)
    hasPending = true
  }

  @inline(never)
  private func enqueueChange(old oldValue: Value, new newValue: Value, setter: ThreadID?) {
    enqueue(.change(old: oldValue, new: newValue, setter: setter))
  }

  // MARK: - Turns

  private static func isChange(_ event: PendingEvent, by thread: ThreadID) -> Bool {
    if case .change(_, _, thread?) = event { return true }
    return false
  }

  /// How long a setter waits for its turn before leaving its change to the deliverer.
  private static var turnTimeout: DispatchTimeInterval { .milliseconds(100) }

  /// Entered by the deliverer with the lock held when the head of the queue is a change it does
  /// not deliver itself and none of its own is queued: hands the role to `setter` (waiting for
  /// it) or to the delivery queue, and returns with the lock released.
  private func handOver(to setter: ThreadID, released: inout [Callback]) {
    let thread = ThreadID.current
    let next: TurnWaiter?
    progress &+= 1
    if setter == .deliveryQueue {
      state.handOverToQueue(from: thread)
      next = nil
    } else {
      state.handOver(from: thread, to: setter)
      guard let index = waiters.firstIndex(where: { $0.thread == setter }) else {
        preconditionFailure("A queued change belongs to \(setter), which is not waiting.")
      }
      next = waiters.remove(at: index)
    }
    lock.unlock()
    releaseOutsideLock(&released)
    if let next {
      next.semaphore.signal()
    } else {
      let job = DeliveryQueueJob(observable: self)
      // A serial queue of its own, not a global queue: on Linux, libdispatch runs a global
      // queue's work only while fewer threads than cores are taken (blocked ones included) and
      // adds a thread about a second later, so behind a busy producer the job started 0.9 s
      // late while setters waited for it. A serial queue's work always gets a thread.
      DispatchQueue(label: "PropertyObservation.delivery").async { job.run() }
    }
  }

  /// Waits, without the lock, until a deliverer hands this thread the role; returns `true` then,
  /// or `false` if another thread delivered the change for it. If no round is delivered for a
  /// whole `turnTimeout`, the thread's queued changes are left to the deliverer and it returns
  /// `false`: waiting longer could deadlock when a callback on the delivering thread is itself
  /// waiting for this thread.
  private func waitForTurn(_ waiter: TurnWaiter) -> Bool {
    var lastProgress = lock.withLock { progress }
    while true {
      let isSignalled = waiter.semaphore.wait(timeout: .now() + Self.turnTimeout) == .success
      lock.lock()
      if state.isDeliverer(waiter.thread) {
        lock.unlock()
        return true
      }
      if waiter.isDelivered {
        // A thread that could not wait delivered the change for this one.
        lock.unlock()
        return false
      }
      precondition(!isSignalled, "A setter was woken without its turn or its delivery.")
      if progress != lastProgress {
        // Rounds are being delivered: the turn is slow (a busy machine), not stuck. Keep waiting.
        lastProgress = progress
        lock.unlock()
        continue
      }
      // No round for a whole timeout: the deliverer may be a callback waiting for this very
      // thread, so waiting on could deadlock, however long the queue. The deliverer takes the
      // change.
      waiters.removeAll { $0 === waiter }
      pending.updateEach { event in
        guard case .change(let oldValue, let newValue, waiter.thread?) = event else {
          return event
        }
        return .change(old: oldValue, new: newValue, setter: .anyDeliverer)
      }
      lock.unlock()
      return false
    }
  }
}

/// A change stored inside a transaction, whose round runs when the transaction ends.
private final class TransactionRecord<Value>: TransactionParticipant {
  let observable: ReadOnlyObservable<Value>
  let oldValue: Value

  init(observable: ReadOnlyObservable<Value>, oldValue: Value) {
    self.observable = observable
    self.oldValue = oldValue
  }

  func commitTransaction() {
    observable.commitTransaction(from: oldValue)
  }
}

/// The delivery queue's job for one observable, sent to a serial queue of its own.
///
/// Only an observable used from several threads hands changes to the queue, and an observable is
/// `Sendable` (so can be used from several threads) only when its value is: for the others this
/// job is never made. Its state is guarded by the observable's lock.
private struct DeliveryQueueJob<Value>: @unchecked Sendable {
  let observable: ReadOnlyObservable<Value>

  func run() {
    observable.runDeliveryQueueJob()
  }
}

/// A setter waiting for its turn to deliver its change; the deliverer signals it when handing
/// over the role.
private final class TurnWaiter {
  let thread: ThreadID
  let semaphore = DispatchSemaphore(value: 0)
  /// Set, under the observable's lock, when another thread delivered this setter's change.
  var isDelivered = false

  init(thread: ThreadID) {
    self.thread = thread
  }
}

/// A registration with `.initial`, whose entry joins the list only after `.initial` has
/// returned on its registering thread (or a registration queued behind such a one, open from the
/// start). Every property is guarded by the observable's lock; once all gates of its segment are
/// open, only the deliverer reads it.
private final class Gate<Value> {
  private(set) var entry: ObserverEntry<Value>
  var isOpen: Bool
  private(set) var isCancelled = false
  /// The first round of its segment's backlog that it missed (the ones before it were made
  /// before it registered).
  var firstRound = 0

  init(entry: ObserverEntry<Value>, isOpen: Bool = false) {
    self.entry = entry
    self.isOpen = isOpen
  }

  /// Cancels the gate and moves its closure to `released`, leaving `vacant`, so that what it
  /// captured is released at once. A catch-up that may be calling it holds its own copy.
  func cancel(
    released: inout [(Value, ObservableOptions) -> Void],
    leaving vacant: @escaping (Value, ObservableOptions) -> Void
  ) {
    guard !isCancelled else { return }
    isCancelled = true
    entry.markRemoved()
    released.append(entry.takeCallback(leaving: vacant))
  }

  /// The entry's closure, leaving `vacant` (see ``ObserverEntry/takeCallback(leaving:)``).
  func takeCallback(
    leaving vacant: @escaping (Value, ObservableOptions) -> Void
  ) -> (Value, ObservableOptions) -> Void {
    entry.takeCallback(leaving: vacant)
  }
}

/// Registrations the deliverer reached behind a gate that was still closed, in registration
/// order, and the rounds delivered since the first of them: they keep their place in the order
/// and miss no round, and join the list together once every gate among them is open. Guarded by
/// the observable's lock.
private final class HeldRegistrations<Value> {
  private(set) var gates: [Gate<Value>] = []
  var backlog: [(Value, Value)] = []

  /// Whether every gate is open, so the segment can be caught up and join the list.
  var isReady: Bool { gates.allSatisfy { $0.isOpen } }

  func hold(_ gate: Gate<Value>) {
    gate.firstRound = backlog.count
    gates.append(gate)
  }
}

/// Where ``ReadOnlyObservable/trace(as:_:)`` sends its reports.
struct Tracer {
  let name: String
  let handler: (RoundTrace) -> Void
}

/// What one round did, counted as it runs whether or not anyone traces: two additions per
/// callback cost less than a branch on the tracer.
private struct RoundOutcome {
  var calls = 0
  var pruned = 0
}

// Every stored property is guarded by `lock` (see the note on the properties above). The
// registered closures are called one at a time, never concurrently, and in the isolation they
// were registered from: a main-actor or actor closure only on its executor (`CallbackIsolation`).
// One case Swift cannot check: a non-`@Sendable` closure registered from nonisolated code runs
// on the delivering thread, which may be another thread (see the Threading article).
extension ReadOnlyObservable: @unchecked Sendable where Value: Sendable {}

extension ReadOnlyObservable: CustomStringConvertible {
  /// The type, the value and the number of live observers, for example
  /// `Observable<Int>(42, observers: 2)`.
  public var description: String {
    let (value, count) = lock.withLock { (storage, observers.liveCount) }
    // Derived observables are internal subclasses; name the public type users know them by.
    let typeName = self is Observable<Value> ? "Observable" : "ReadOnlyObservable"
    return "\(typeName)<\(Value.self)>(\(value), observers: \(count))"
  }
}

/// Keeps `object` alive until this point, without a call: the standard library's
/// `withExtendedLifetime` is not inlined into this unspecialized code and costs a call per
/// delivery.
@inline(__always)
private func keepAlive(_ object: AnyObject?) {
  #if compiler(>=6.1)
    extendLifetime(object)
  #else
    withExtendedLifetime(object) {}
  #endif
}
