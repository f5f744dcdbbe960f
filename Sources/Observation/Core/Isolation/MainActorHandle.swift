/// A main-actor registration's callback, behind its observable's main-actor lane.
///
/// The observable's rounds call ``dispatch(_:_:)``. In a round that runs on the main queue with
/// nothing waiting in the lane (``MainQueueLane/inlineRound``, decided once per round), it
/// calls the callback at once, the round holding the owner for it: the cost of a nonisolated
/// callback. Otherwise the call goes through the lane, which delivers it on the main queue, in
/// order behind the observable's earlier main-actor calls.
///
/// Calls waiting in the lane name the handle's ``MainActorTarget``, not the handle: the target
/// is ended (``MainActorTarget/end()``) as soon as the registration ends, and its waiting calls
/// find nothing to run from then on. The handle lives exactly as long as the registration's
/// closure (or, for a token, as long as the token holds it), so its `deinit` ends the target;
/// a token's removal ends it first, since a round in progress may still hold the handle. A
/// registration removed while another thread delivers keeps its closure until that thread's
/// next round boundary; its waiting calls are dropped from the moment of the removal all the
/// same, because the lane checks the observable's removals when they changed
/// (``ReadOnlyObservable/runWaitingCall(_:_:_:)``).
///
/// A main-actor token registration keeps its handle differently (see
/// ``ObserverEntry/mainActorBit``): its entry holds the user's closure itself, its token holds
/// the handle as the source it removes the registration from, and the handle forwards that
/// removal to the observable. Other main-actor registrations use ``RemovableMainActorHandle``,
/// whose target also knows which registration it delivers.
class MainActorHandle<Value>: RegistrationRemoving {
  /// The user's callback, for inline calls: the round holds the owner for them.
  private let callback: (Value, ObservableOptions) -> Void
  /// The same callback with its owner check, for calls made at once outside a round.
  private let confined: ConfinedCallback<Value>
  private let lane: MainQueueLane<Value, MainActorCall>
  private let inlineRound: InlineRound
  private let ends: MainActorEnds
  /// What this handle's waiting calls run: made with the first of them, so that registering
  /// (and a handle whose calls never wait, the main thread's inline rounds) costs no object
  /// more. Written under `ends.lock` by the observable's deliverer only; the deliverer reads it
  /// without the lock (the observable's lock orders its deliverers one after another, as for
  /// ``InlineRound``), the thread that ends the registration under it.
  @exclusivity(unchecked) private var madeTarget: MainActorTarget<Value>?
  /// Set under `ends.lock` when the registration ends: a target made after that is born ended.
  @exclusivity(unchecked) private var hasEnded = false
  /// For a token registration: the observable its token removes the registration from.
  private let source: ReadOnlyObservable<Value>?

  init(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    lane: MainActorLane<Value>,
    tokenSource: ReadOnlyObservable<Value>? = nil
  ) {
    self.callback = callback
    self.confined = ConfinedCallback(callback, owner: owner)
    self.lane = lane.lane
    self.inlineRound = lane.lane.inlineRound
    self.ends = lane.ends
    self.source = tokenSource
  }

  deinit {
    // The registration's closure (or its token) let go of the handle: the registration ended.
    endTarget()
  }

  final func removeRegistration(identifiedBy handle: AnyObject) {
    // Before the observable's removal, not in `deinit`: a round in progress may still hold the
    // handle after the token let go of it.
    endTarget()
    source?.removeRegistration(identifiedBy: handle)
  }

  /// For a registration that a removal names: its key and serial (see
  /// ``MainActorCallTarget/removable``); `nil` for a token.
  var removable: (key: RegistrationKey, serial: UInt)? { nil }

  /// Ends the registration for its waiting calls (see ``MainActorTarget/end()``).
  private func endTarget() {
    ends.lock.lock()
    hasEnded = true
    let target = madeTarget
    ends.lock.unlock()
    target?.end()
  }

  /// The target, made by the first call that waits (see `madeTarget`).
  private var target: MainActorTarget<Value> {
    if let madeTarget { return madeTarget }
    let removable = self.removable
    ends.lock.lock()
    let made = MainActorTarget(hasEnded ? nil : confined, ends: ends, removableAs: removable)
    madeTarget = made
    ends.lock.unlock()
    return made
  }

  /// Called by whichever thread delivers the observable's change.
  @inline(__always)
  final func dispatch(_ value: Value, _ option: ObservableOptions) {
    // Only the thread that runs the round reads the flag it set (see `InlineRound`).
    if inlineRound.isSet { return callback(value, option) }
    dispatchThroughLane(value, option)
  }

  /// Kept out of ``dispatch(_:_:)``: code that may build a `MainActorCall` looks its generic
  /// metadata up on entry, which would cost the inline path more than the callback itself.
  @inline(never)
  private func dispatchThroughLane(_ value: Value, _ option: ObservableOptions) {
    if lane.deliverInlineIfIdle({ confined.run(value, option) }) { return }
    // A call for the same target as the call queued just before it names none (see
    // `MainActorCall.target`): the producer then touches no reference count per call. Only the
    // observable's deliverer queues calls, one after another in the order the observable's
    // lock gives them (as for `InlineRound.isSet`), so the previous call is the lane's last.
    let identity = ObjectIdentifier(target)
    let repeats = inlineRound.lastQueuedTarget == identity
    inlineRound.lastQueuedTarget = identity
    let call = MainActorCall(target: repeats ? nil : target, option: option)
    if lane.submit(value, tag: consume call) {
      // A round on the main queue: its call, and the backlog before it, go out before it ends.
      lane.drain(withinFrameBudget: false)
    }
  }
}

/// The handle of a main-actor registration that a removal names (an owner's, a binding's): its
/// target knows its registration, so that a removal made while another thread delivers drops
/// its waiting calls at once (see ``ReadOnlyObservable/runWaitingCall(_:_:_:)``).
final class RemovableMainActorHandle<Value>: MainActorHandle<Value> {
  /// The registration this handle delivers.
  private let key: RegistrationKey
  /// Orders the observable's main-actor handles by creation, so a removal ends only the
  /// registrations made before it.
  private let serial: UInt

  init(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    key: RegistrationKey,
    lane: (lane: MainActorLane<Value>, serial: UInt)
  ) {
    self.key = key
    self.serial = lane.serial
    super.init(callback, owner: owner, lane: lane.lane)
  }

  override var removable: (key: RegistrationKey, serial: UInt)? { (key, serial) }
}

/// An observable's main-actor lane for one main scheduler, with what its handles share.
struct MainActorLane<Value> {
  let lane: MainQueueLane<Value, MainActorCall>
  /// Guards the ends of the lane's targets (see ``MainActorEnds``).
  let ends: MainActorEnds
}

/// One main-actor call waiting in an observable's main-actor lane, without its value (the lane's
/// item): the lane's tag. Not generic, so that queueing and delivering it costs no metadata
/// look-up in the unspecialized code of the lane and the observable.
struct MainActorCall {
  /// The target the call runs, or `nil` for the target of the call queued just before it in the
  /// same lane. A run of calls for one target (a background producer's sets to one observer)
  /// then costs one retain and one release of the target on each side, not one per call, where
  /// both threads would fight over its reference count. The lane delivers its calls one after
  /// another in the order they were queued and drops none unless its observable is gone, so the
  /// main queue resolves `nil` to the last target it saw (``MainActorLaneCursor``), and that
  /// target stays alive until then: either a waiting call names it, or the cursor holds it.
  let target: MainActorCallTarget?
  let option: ObservableOptions
}

/// The lane's reader of ``MainActorCall``s, on the main queue: the target the last call named,
/// and the removals already checked for it. Used only by the thread that holds the lane's
/// delivery, one batch after another (the lane's lock orders them), so it needs no lock.
final class MainActorLaneCursor {
  /// The target of the last call delivered. Held strongly, so that a `nil` target stays
  /// resolvable; once ended, a target holds no callback.
  @exclusivity(unchecked) var current: MainActorCallTarget?
  /// The ``MainActorEnds/epoch`` at which `current` was last found not ended by the observable's
  /// removals made during a delivery; `UInt.max` when not checked yet.
  @exclusivity(unchecked) var checkedEpoch = UInt.max
  /// The owner of `current`'s registration, held for the rest of the batch once a call loaded
  /// it (see ``ConfinedCallback/run(_:_:holding:)``); `nil` between batches.
  @exclusivity(unchecked) var heldOwner: AnyObject?
}

/// One batch of a main-actor lane's calls: lets go of the owner its calls held when the lane
/// is done with the batch (it releases the batch's closure, which holds this, without its
/// lock).
final class MainActorBatch {
  let cursor: MainActorLaneCursor

  init(_ cursor: MainActorLaneCursor) {
    self.cursor = cursor
  }

  deinit {
    cursor.heldOwner = nil
  }
}

/// The lock shared by the targets of one main-actor lane and the count of the observable's
/// removals made while another thread delivered (``ReadOnlyObservable/endedDuringDelivery``).
///
/// A waiting call takes this lock once, not the observable's: the producer of the values holds
/// the observable's lock for part of every set, while this one is taken only by the main queue
/// and by the rare end of a registration. A call checks the observable's removals under the
/// observable's lock only when `epoch` moved since its target was last checked.
///
/// `@unchecked Sendable`: `epoch` and every ``MainActorTarget``'s callback are guarded by `lock`.
final class MainActorEnds: @unchecked Sendable {
  let lock = Lock()
  /// Moves, under `lock`, whenever the observable records a removal made during a delivery
  /// (the observable's lock held too, taken first).
  @exclusivity(unchecked) private(set) var epoch: UInt = 0

  deinit {
    lock.deallocate()
  }

  /// Records that the observable's removals changed; called with the observable's lock held.
  func removalRecorded() {
    lock.lock()
    epoch &+= 1
    lock.unlock()
  }
}

/// What a waiting main-actor call runs: a ``MainActorTarget`` seen without its value type, so
/// that ``MainActorCall`` need not be generic.
class MainActorCallTarget {
  final let ends: MainActorEnds
  /// For a registration that a removal names: its key and the serial that orders the
  /// observable's main-actor handles by creation, so a removal ends only the registrations
  /// made before it. `nil` for a token, which a removal never ends this way: ending the token
  /// ends its target itself.
  final let removable: (key: RegistrationKey, serial: UInt)?

  init(ends: MainActorEnds, removableAs removable: (key: RegistrationKey, serial: UInt)?) {
    self.ends = ends
    self.removable = removable
  }

  /// Whether one of `removals` (each ending the registrations made before `before`) ends this
  /// target's registration.
  final func isEnded(by removals: [(selection: Selection, before: UInt)]) -> Bool {
    guard let removable else { return false }
    return removals.contains {
      removable.serial < $0.before && removable.key.isSelected(by: $0.selection)
    }
  }

  /// Runs the call, on the main actor, with the value `value` points to, which is of the
  /// target's value type, unless the target has ended.
  ///
  /// - Parameters:
  ///   - value: The call's value.
  ///   - option: The option delivered.
  ///   - checkedEpoch: The ``MainActorEnds/epoch`` at which the caller found the registration
  ///     not ended by the observable's removals; ignored for a token.
  ///   - heldOwner: The registration's owner, held for the rest of the batch (see
  ///     ``ConfinedCallback/run(_:_:holding:)``).
  /// - Returns: `nil` when the call ran or was dropped; otherwise (a removable target whose
  ///   observable recorded removals since `checkedEpoch`) the current epoch, and nothing ran:
  ///   the caller checks the removals and calls again.
  func runWaiting(
    _ value: UnsafeRawPointer, _ option: ObservableOptions, checkedEpoch: UInt,
    heldOwner: inout AnyObject?
  ) -> UInt? {
    preconditionFailure("Overridden by MainActorTarget.")
  }
}

/// The part of a main-actor registration its waiting calls run: the callback with its owner
/// check, until the registration ends.
final class MainActorTarget<Value>: MainActorCallTarget {
  /// `nil` once the registration ended, released then, not when the last waiting call goes.
  /// Guarded by `ends.lock`.
  @exclusivity(unchecked) private var confined: ConfinedCallback<Value>?

  /// - Parameters:
  ///   - confined: The callback; `nil` for a target made after its registration ended.
  ///   - ends: The lane's lock and removal epoch.
  ///   - removable: The registration's key and serial, for one that a removal names.
  init(
    _ confined: ConfinedCallback<Value>?,
    ends: MainActorEnds,
    removableAs removable: (key: RegistrationKey, serial: UInt)?
  ) {
    self.confined = confined
    super.init(ends: ends, removableAs: removable)
  }

  /// Ends the registration for its waiting calls: none runs once this returns.
  func end() {
    ends.lock.lock()
    let released = confined
    confined = nil
    ends.lock.unlock()
    // Released here, outside the lock: the callback's captures may have a `deinit` of the user.
    withExtendedLifetime(released) {}
  }

  override func runWaiting(
    _ value: UnsafeRawPointer, _ option: ObservableOptions, checkedEpoch: UInt,
    heldOwner: inout AnyObject?
  ) -> UInt? {
    ends.lock.lock()
    if removable != nil, ends.epoch != checkedEpoch {
      let epoch = ends.epoch
      ends.lock.unlock()
      return epoch
    }
    let confined = self.confined
    ends.lock.unlock()
    // Called outside the lock; it checks the owner.
    confined?.run(
      value.assumingMemoryBound(to: Value.self).pointee, option, holding: &heldOwner)
    return nil
  }
}
