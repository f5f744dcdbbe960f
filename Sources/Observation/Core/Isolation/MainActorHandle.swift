/// A main-actor registration's callback, behind its observable's main-actor lane.
///
/// The observable's rounds call ``dispatch(_:_:)``. In a round that runs on the main queue with
/// nothing waiting in the lane (``MainQueueLane/inlineRound``, decided once per round), it
/// calls the callback at once, the round holding the owner for it: the cost of a nonisolated
/// callback. Otherwise the call goes through the lane, which delivers it on the main queue, in
/// order behind the observable's earlier main-actor calls.
///
/// Calls waiting in the lane hold the handle weakly: once the registration ends and releases
/// its closure (which holds the handle), they find nothing to run. A registration removed while
/// another thread delivers keeps its closure until that thread's next round boundary; its
/// waiting calls are dropped from the moment of the removal all the same, because the lane asks
/// the observable before each call (``ReadOnlyObservable/runWaitingCall(_:_:)``).
///
/// A main-actor token registration keeps its handle differently (see
/// ``ObserverEntry/mainActorBit``): its entry holds the user's closure itself, its token holds
/// the handle as the source it removes the registration from, and the handle forwards that
/// removal to the observable. Cancelling the token releases the handle, so waiting calls are
/// dropped there too. Other main-actor registrations use ``RemovableMainActorHandle``, which
/// also knows which registration it delivers.
class MainActorHandle<Value>: MainActorCallTarget, RegistrationRemoving {
  /// The user's callback, for inline calls: the round holds the owner for them.
  private let callback: (Value, ObservableOptions) -> Void
  /// The same callback with its owner check, for every other call.
  private let confined: ConfinedCallback<Value>
  private let lane: MainQueueLane<Value, MainActorCall>
  private let inlineRound: InlineRound
  /// For a token registration: the observable its token removes the registration from.
  private let source: ReadOnlyObservable<Value>?

  init(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    lane: MainQueueLane<Value, MainActorCall>,
    tokenSource: ReadOnlyObservable<Value>? = nil
  ) {
    self.callback = callback
    self.confined = ConfinedCallback(callback, owner: owner)
    self.lane = lane
    self.inlineRound = lane.inlineRound
    self.source = tokenSource
    super.init(endsByRemoval: tokenSource == nil)
  }

  final func removeRegistration(identifiedBy handle: AnyObject) {
    source?.removeRegistration(identifiedBy: handle)
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
    if lane.deliverInlineIfIdle({ run(value, option) }) { return }
    let call = MainActorCall(target: reference, option: option, endsByRemoval: endsByRemoval)
    if lane.submit(value, tag: consume call) {
      // A round on the main queue: its call, and the backlog before it, go out before it ends.
      lane.drain(withinFrameBudget: false)
    }
  }

  /// Runs a call outside a round (from the lane, or inline when the lane is idle), checking
  /// the owner (see ``ConfinedCallback``).
  final func run(_ value: Value, _ option: ObservableOptions) {
    confined.run(value, option)
  }

  /// ``run(_:_:)`` for a call that waited in the lane, its value of type `Value` behind
  /// `value`.
  final override func runWaiting(_ value: UnsafeRawPointer, _ option: ObservableOptions) {
    confined.run(value.assumingMemoryBound(to: Value.self).pointee, option)
  }
}

/// The handle of a main-actor registration that a removal names (an owner's, a binding's):
/// it knows its registration, so that a removal made while another thread delivers drops its
/// waiting calls at once (see ``ReadOnlyObservable/runWaitingCall(_:_:)``). Kept apart from
/// ``MainActorHandle`` so that a token's handle stays as small as before.
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
    lane: (lane: MainQueueLane<Value, MainActorCall>, serial: UInt)
  ) {
    self.key = key
    self.serial = lane.serial
    super.init(callback, owner: owner, lane: lane.lane)
  }

  override func isEnded(by removals: [(selection: Selection, before: UInt)]) -> Bool {
    removals.contains { serial < $0.before && key.isSelected(by: $0.selection) }
  }
}

/// One main-actor call waiting in an observable's main-actor lane, without its value (the lane's
/// item): the lane's tag. Not generic, so that queueing and delivering it costs no metadata
/// look-up in the unspecialized code of the lane and the observable.
struct MainActorCall {
  /// Holds the handle weakly. The call holds this reference rather than a weak reference of its
  /// own: creating, copying and destroying a weak reference each cost atomic operations on the
  /// handle's side table, on both threads, where a strong reference to an object that nothing
  /// references weakly costs one.
  let target: MainActorCallTarget.Reference
  let option: ObservableOptions
  /// The handle's ``MainActorCallTarget/endsByRemoval``, known without loading the handle:
  /// such a call loads it under the observable's lock (see
  /// ``ReadOnlyObservable/runWaitingCall(_:_:)``).
  let endsByRemoval: Bool
}

/// What a waiting main-actor call runs: a ``MainActorHandle`` seen without its value type, so
/// that ``MainActorCall`` need not be generic.
class MainActorCallTarget {
  /// The handle, held weakly: what waiting calls hold, one per handle.
  final class Reference {
    weak var handle: MainActorCallTarget?
  }

  /// Whether a removal can end this handle's registration while its calls wait (see
  /// ``isEnded(by:)``): when not, a waiting call need not ask the observable.
  final let endsByRemoval: Bool
  /// This handle, held weakly, for its waiting calls: made with the first of them, because a
  /// weak reference gives the handle a side table, which slows every retain and release of it,
  /// and a handle whose calls never wait (the main thread's inline rounds) should not pay that.
  ///
  /// No lock: only the thread delivering the handle's observable makes calls, and the
  /// observable's lock orders its deliverers one after another (as for ``InlineRound``).
  final var reference: Reference {
    if let existing = madeReference { return existing }
    let made = Reference()
    made.handle = self
    madeReference = made
    return made
  }
  private final var madeReference: Reference?

  init(endsByRemoval: Bool) {
    self.endsByRemoval = endsByRemoval
  }

  /// Whether one of `removals` (each ending the registrations made before `before`) ends this
  /// handle's registration. A token's never does: cancelling it releases the handle itself.
  func isEnded(by removals: [(selection: Selection, before: UInt)]) -> Bool {
    false
  }

  /// Runs the call, on the main actor, with the value `value` points to, which is of the
  /// handle's value type.
  func runWaiting(_ value: UnsafeRawPointer, _ option: ObservableOptions) {
    preconditionFailure("Overridden by MainActorHandle.")
  }
}
