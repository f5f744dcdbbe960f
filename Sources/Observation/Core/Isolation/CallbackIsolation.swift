/// Where a registered callback runs: the isolation of the closure that was registered.
///
/// Every public registration takes its closure as
/// `@_inheritActorContext(always) @isolated(any) @Sendable`: a closure written in a `@MainActor`
/// view controller is isolated to the main actor and may touch its state, one written in an
/// actor is isolated to that actor, and one written in nonisolated code must be `@Sendable`, so
/// the compiler refuses it if it captures non-`Sendable` state or mutates a captured `var`. The
/// closure's `isolation` says where it must run (see ``init(of:calledFrom:)``); the library only
/// ever calls it there. See the Threading article for the rules.
enum CallbackIsolation {
  /// A nonisolated closure: called on the thread that delivers the round.
  case delivering
  /// Isolated to the main actor: called synchronously when the round runs on the main queue,
  /// otherwise through a lane that hops to the main queue in order.
  case mainActor
  /// Isolated to another actor: called on that actor, in order, after the round.
  case actor(any Actor)

  @inline(__always)
  init(_ isolation: (any Actor)?) {
    guard let isolation else {
      self = .delivering
      return
    }
    if isolation === MainActor.shared {
      self = .mainActor
    } else {
      self = .actor(isolation)
    }
  }

  /// The isolation `closure` must run in: its own, or, when it reports none, the registering
  /// code's (`#isolation` of the call). A reference to an actor's method reports no isolation
  /// (a compiler bug), although it may only run on that actor; the caller's isolation is then the
  /// actor's. A nonisolated closure registered from isolated code runs there too: never wrong,
  /// since a nonisolated closure may run anywhere.
  @inline(__always)
  init(of isolation: (any Actor)?, calledFrom caller: (any Actor)?) {
    self.init(isolation ?? caller)
  }

  /// `closure`, an `@isolated(any)` function, as the synchronous function type the delivery loop
  /// calls (one overload per shape of the public registrations).
  @inline(__always)
  static func synchronous<Value>(
    _ closure: @escaping @isolated(any) @Sendable (Value, ObservableOptions) -> Void
  ) -> (Value, ObservableOptions) -> Void {
    reinterpret(IsolatedCallback(call: closure), as: SynchronousCallback<Value>.self).call
  }

  @inline(__always)
  static func synchronous<Owner: AnyObject, Value>(
    _ closure: @escaping @isolated(any) @Sendable (Owner, Value) -> Void
  ) -> (Owner, Value) -> Void {
    reinterpret(
      IsolatedOwnedCallback(call: closure), as: SynchronousOwnedCallback<Owner, Value>.self
    )
    .call
  }

  @inline(__always)
  static func synchronous<Argument>(
    _ closure: @escaping @isolated(any) @Sendable (Argument) -> Void
  ) -> (Argument) -> Void {
    reinterpret(IsolatedHandler(call: closure), as: SynchronousHandler<Argument>.self).call
  }

  /// The library's one unsafe conversion: `box`, a struct holding an `@isolated(any)` function,
  /// read as its twin holding the synchronous type.
  ///
  /// Swift has no safe way to call an `@isolated(any)` function synchronously, even on its own
  /// executor. The two function types have the same representation (a function pointer and a
  /// context, 16 bytes; `IsolatedClosureRepresentationTests` pins it in debug, release and
  /// ThreadSanitizer builds, so a toolchain that changes it fails CI), and the library calls the
  /// result only in the closure's isolation (``confine(_:owner:key:on:)``), which is what makes
  /// the call sound. The functions travel inside structs whose fields have the same shape, so
  /// that no reabstraction thunk wraps them: a function passed to a generic function itself (as
  /// `unsafeBitCast` is) would be, and every delivery would pay two more calls.
  @inline(__always)
  private static func reinterpret<Box, Twin>(_ box: Box, as _: Twin.Type) -> Twin {
    unsafeBitCast(box, to: Twin.self)
  }

  /// A callback that runs `callback` in this isolation, to be stored in `observable`'s list and
  /// called by whichever thread delivers.
  ///
  /// The closure's own type says nothing about its isolation (the registering call's `isolated`
  /// parameter did), so it must never run outside it: the main-actor and actor forms only call
  /// it on their executor. A call that waits in a lane is dropped if `owner` has died meanwhile,
  /// or if the registration ended and released the returned closure, or if `key`'s registration
  /// was removed while another thread delivered (see ``ReadOnlyObservable/hasEnded(_:)``).
  // Inlined: the nonisolated case is every registration from nonisolated code, and a call here
  // cost a tenth of such a registration. The other cases build lanes and stay out of line.
  @inline(__always)
  func confine<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    key: RegistrationKey,
    on observable: ReadOnlyObservable<Value>
  ) -> (Value, ObservableOptions) -> Void {
    var handleSerial: UInt?
    return confine(callback, owner: owner, key: key, on: observable, handleSerial: &handleSerial)
  }

  /// ``confine(_:owner:key:on:)``, reporting in `handleSerial` the serial of the main-actor
  /// handle it made, if it made one: a registration that replaces its owner's earlier ones ends
  /// only the handles made before its own (see ``ReadOnlyObservable/register(_:replacing:initial:sendsInitial:endingHandlesBefore:)``).
  @inline(__always)
  func confine<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    key: RegistrationKey,
    on observable: ReadOnlyObservable<Value>,
    handleSerial: inout UInt?
  ) -> (Value, ObservableOptions) -> Void {
    switch self {
    case .delivering: callback
    case .mainActor:
      Self.confineToMainActor(
        callback, owner: owner, key: key, on: observable, handleSerial: &handleSerial)
    case .actor(let actor): Self.confine(callback, owner: owner, to: actor, on: observable)
    }
  }

  /// ``confine(_:owner:on:)`` for the main actor: through the observable's main-actor lane.
  @inline(never)
  private static func confineToMainActor<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    key: RegistrationKey,
    on observable: ReadOnlyObservable<Value>,
    handleSerial: inout UInt?
  ) -> (Value, ObservableOptions) -> Void {
    let lane = observable.mainActorLane()
    handleSerial = lane.serial
    let handle = RemovableMainActorHandle(callback, owner: owner, key: key, lane: lane)
    // A closure rather than the method reference: the check of `dispatch` is inlined into it.
    return { value, option in handle.dispatch(value, option) }
  }

  /// ``confine(_:owner:on:)`` for another actor: through the lane of `actor`, shared by every
  /// registration made there on any observable, so calls arrive in the order they were made:
  /// round by round and, within a round, in registration order.
  @inline(never)
  private static func confine<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    to actor: any Actor,
    on observable: ReadOnlyObservable<Value>
  ) -> (Value, ObservableOptions) -> Void {
    let target = ConfinedCallback(callback, owner: owner)
    let lane = ActorLane.lane(for: actor)
    // The closure holds `target`; waiting calls hold it weakly, so they find nothing to run once
    // the registration ends and releases the closure.
    return { value, option in
      lane.submit { [weak target] in target?.run(value, option) }
    }
  }
}

// The boxes of ``CallbackIsolation/reinterpret(_:as:)``: each pair differs only in the
// isolation of its function, so the two have the same layout.

struct IsolatedCallback<Value> {
  let call: @isolated(any) @Sendable (Value, ObservableOptions) -> Void
}

struct SynchronousCallback<Value> {
  let call: (Value, ObservableOptions) -> Void
}

struct IsolatedOwnedCallback<Owner: AnyObject, Value> {
  let call: @isolated(any) @Sendable (Owner, Value) -> Void
}

struct SynchronousOwnedCallback<Owner: AnyObject, Value> {
  let call: (Owner, Value) -> Void
}

struct IsolatedHandler<Argument> {
  let call: @isolated(any) @Sendable (Argument) -> Void
}

struct SynchronousHandler<Argument> {
  let call: (Argument) -> Void
}
