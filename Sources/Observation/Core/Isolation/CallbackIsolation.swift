/// Where a registered callback runs: the isolation of the code that registered it.
///
/// Captured at registration through an `isolation: isolated (any Actor)? = #isolation`
/// parameter, so that a closure written in a `@MainActor` view controller is only ever called on
/// the main actor, a closure written in an actor only on that actor, and a nonisolated closure on
/// the delivering thread, as before. See the Threading article for the rules.
enum CallbackIsolation {
  /// Registered from nonisolated code: called on the thread that delivers the round.
  case delivering
  /// Registered from the main actor: called synchronously when the round runs on the main
  /// queue, otherwise through a lane that hops to the main queue in order.
  case mainActor
  /// Registered from another actor: called on that actor, in order, after the round.
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
    switch self {
    case .delivering: callback
    case .mainActor: Self.confineToMainActor(callback, owner: owner, key: key, on: observable)
    case .actor(let actor): Self.confine(callback, owner: owner, to: actor, on: observable)
    }
  }

  /// ``confine(_:owner:on:)`` for the main actor: through the observable's main-actor lane.
  @inline(never)
  private static func confineToMainActor<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    key: RegistrationKey,
    on observable: ReadOnlyObservable<Value>
  ) -> (Value, ObservableOptions) -> Void {
    let handle = RemovableMainActorHandle(
      callback, owner: owner, key: key, lane: observable.mainActorLane())
    // A closure rather than the method reference: the check of `dispatch` is inlined into it.
    return { value, option in handle.dispatch(value, option) }
  }

  /// ``confine(_:owner:on:)`` for another actor: through the observable's lane for `actor`,
  /// shared by every registration made there, so calls arrive round by round and, within a
  /// round, in registration order.
  @inline(never)
  private static func confine<Value>(
    _ callback: @escaping (Value, ObservableOptions) -> Void,
    owner: AnyObject?,
    to actor: any Actor,
    on observable: ReadOnlyObservable<Value>
  ) -> (Value, ObservableOptions) -> Void {
    let target = ConfinedCallback(callback, owner: owner)
    let lane = observable.actorLane(for: actor)
    // The closure holds `target`; waiting calls hold it weakly, so they find nothing to run once
    // the registration ends and releases the closure.
    return { value, option in
      lane.submit(Call(target: target, value: value, option: option))
    }
  }
}

/// One call waiting in an actor lane.
struct Call<Value> {
  weak var target: ConfinedCallback<Value>?
  let value: Value
  let option: ObservableOptions
}
