extension ReadOnlyObservable {
  /// Registers `closure` for as long as the returned token lives: the way to observe without an
  /// owner object, and the fastest one, since it needs no weak load per delivery.
  ///
  /// ```swift
  /// let token = user.name.observe(options: [.initial, .new]) { name, _ in
  ///   print("User's name is \(name)")
  /// }
  /// user.name.value = "Amelia"
  /// token.cancel()
  /// ```
  ///
  /// - Parameters:
  ///   - options: Which callbacks to deliver; `[.new]` by default. An empty set is accepted, and
  ///     such a registration is never called.
  ///   - isolation: Where `closure` runs when it reports no isolation of its own (a reference to
  ///     an actor's method): by default the calling code's. See the Threading article.
  ///   - closure: Receives the value and the single option being delivered, in its own isolation: the one of the code that wrote it (the main actor
  ///     in a `@MainActor` type, an actor in its methods). Written in nonisolated code, it runs
  ///     on the delivering thread, hence `@Sendable`.
  /// - Returns: The token that owns the registration. Releasing it ends the registration, so
  ///   discarding the result ends it at once.
  public func observe(
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ closure:
      @escaping @isolated(any) @Sendable (Value, ObservableOptions) -> Void
  ) -> ObservationToken {
    observe(
      options: options, in: CallbackIsolation(of: closure.isolation, calledFrom: isolation),
      CallbackIsolation.synchronous(closure))
  }

  /// ``observe(options:isolation:_:)`` for the library's own registrations: `closure` runs in
  /// `isolation`, which the caller vouches for.
  final func observe(
    options: ObservableOptions, in isolation: CallbackIsolation, _ closure: @escaping Callback
  ) -> ObservationToken {
    let token: ObservationToken
    let entry: NewEntry
    if case .mainActor = isolation, Entry.mainActorBit != 0 {
      // The entry holds the closure itself, so a round on the main queue calls it like a
      // nonisolated one; the handle takes the other calls (see `ObserverEntry.mainActorBit`).
      let handle = MainActorHandle(
        closure, owner: nil, lane: mainActorLane().lane, tokenSource: self)
      token = ObservationToken(source: handle)
      entry = NewEntry(token: token, mainActorHandle: handle, options: options, callback: closure)
    } else {
      token = ObservationToken(source: self)
      entry = NewEntry(
        token: token, options: options,
        callback: isolation.confine(closure, owner: nil, key: .token, on: self))
    }
    register(
      entry, replacing: false, initial: closure, sendsInitial: options.contains(.initial))
    return token
  }

  /// Registers `handler`, owned by `owner`, and passes `owner` to it, so the closure needs no
  /// `[weak self]` dance.
  ///
  /// `owner` is held weakly, as with ``addObserver(_:removeIfExists:options:isolation:closure:)``; it is
  /// strongly referenced only while `handler` runs. The registration is added beside the
  /// owner's other registrations, and ``removeObserver(_:)`` removes it.
  ///
  /// ```swift
  /// model.title.observe(with: self, options: [.initial, .new]) { controller, title in
  ///   controller.titleLabel.text = title
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - owner: The owner of the registration, held weakly and passed to `handler`. It is
  ///     `Sendable`, since `handler` may receive it on the delivering thread: a `@MainActor`
  ///     view controller is.
  ///   - options: Which callbacks to deliver; `[.new]` by default. The handler is not told which
  ///     option it receives; combine `.old` with `.new` only through ``observeChanges(isolation:_:)``.
  ///   - isolation: Where `handler` runs when it reports no isolation of its own (a reference to
  ///     an actor's method): by default the calling code's. See the Threading article.
  ///   - handler: Receives the owner and the value, in its own isolation: the one of the code that wrote it (the main actor
  ///     in a `@MainActor` type, an actor in its methods). Written in nonisolated code, it runs
  ///     on the delivering thread, hence `@Sendable`.
  public func observe<Owner: AnyObject & Sendable>(
    with owner: Owner,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ handler:
      @escaping @isolated(any) @Sendable (Owner, Value) -> Void
  ) {
    observe(
      with: owner, options: options,
      in: CallbackIsolation(of: handler.isolation, calledFrom: isolation),
      CallbackIsolation.synchronous(handler))
  }

  /// ``observe(with:options:isolation:_:)`` for the library's own registrations: `handler` runs
  /// in `isolation`, which the caller vouches for.
  final func observe<Owner: AnyObject>(
    with owner: Owner, options: ObservableOptions, in isolation: CallbackIsolation,
    _ handler: @escaping (Owner, Value) -> Void
  ) {
    let callback: Callback
    if case .delivering = isolation {
      // The delivery loop holds a strong reference to the owner around every call (it loads
      // the weak reference once), so an unowned(unsafe) capture costs nothing and is never
      // dangling.
      callback = { [unowned(unsafe) owner] value, _ in handler(owner, value) }
    } else {
      // The call may wait for another executor, after the delivery loop let go of the owner.
      callback = { [weak owner] value, _ in
        guard let owner else { return }
        handler(owner, value)
      }
    }
    register(
      NewEntry(
        owner: owner,
        kind: .owned,
        options: options,
        callback: isolation.confine(
          keepingAlive(callback), owner: owner, key: .owned(by: owner), on: self)
      ),
      replacing: false,
      initial: callback,
      sendsInitial: options.contains(.initial)
    )
  }

  /// Registers `handler` to receive each change as one value carrying both the old and the new
  /// value, for as long as the returned token lives.
  ///
  /// The handler runs once per set, in the position of a `.new` callback (after every `.old`
  /// callback of the round).
  ///
  /// ```swift
  /// let token = account.balance.observeChanges { change in
  ///   print("balance \(change.oldValue) → \(change.newValue)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: Where `handler` runs when it reports no isolation of its own (a reference to
  ///     an actor's method): by default the calling code's. See the Threading article.
  ///   - handler: Receives each change, in its own isolation: the one of the code that wrote it (the main actor
  ///     in a `@MainActor` type, an actor in its methods). Written in nonisolated code, it runs
  ///     on the delivering thread, hence `@Sendable`.
  /// - Returns: The token that owns the registration.
  public func observeChanges(
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ handler:
      @escaping @isolated(any) @Sendable (ObservedChange<Value>) -> Void
  ) -> ObservationToken {
    observeChanges(includingInitial: false, isolation: isolation, handler)
  }

  /// Registers `handler` to receive each change as one value carrying both the old and the new
  /// value, and, when `includingInitial` is `true`, the current value first.
  ///
  /// The first call, made inside this call in the caller's isolation like any `.initial`
  /// callback, carries the current value as both its ``ObservedChange/oldValue`` and its
  /// ``ObservedChange/newValue``: there is no earlier value, and a screen that fills itself
  /// from `newValue` and animates from `oldValue` draws it without an animation. Then the
  /// handler runs once per set, in the position of a `.new` callback, as with
  /// ``observeChanges(isolation:_:)``. So one registration both fills a screen and follows it:
  ///
  /// ```swift
  /// let token = account.balance.observeChanges(includingInitial: true) { change in
  ///   print("balance \(change.oldValue) → \(change.newValue)")  // "0 → 0" first
  /// }
  /// ```
  ///
  /// A set to an equal value also delivers an old value equal to the new one; to tell the first
  /// call apart, count the calls.
  ///
  /// - Parameters:
  ///   - includingInitial: Whether to call `handler` with the current value before this call
  ///     returns. With `false`, this is ``observeChanges(isolation:_:)``.
  ///   - isolation: Where `handler` runs when it reports no isolation of its own (a reference to
  ///     an actor's method): by default the calling code's. See the Threading article.
  ///   - handler: Receives the current value (if asked for), then each change, in its own isolation: the one of the code that wrote it (the main actor
  ///     in a `@MainActor` type, an actor in its methods). Written in nonisolated code, it runs
  ///     on the delivering thread, hence `@Sendable`.
  /// - Returns: The token that owns the registration.
  public func observeChanges(
    includingInitial: Bool,
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ handler:
      @escaping @isolated(any) @Sendable (ObservedChange<Value>) -> Void
  ) -> ObservationToken {
    let call = CallbackIsolation.synchronous(handler)
    // Rounds never overlap, so the `.old` half of a round always directly precedes its `.new`
    // half for this registration; the box carries it across.
    let previous = PreviousValue<Value>()
    let options: ObservableOptions = includingInitial ? [.initial, .old, .new] : [.old, .new]
    return observe(
      options: options, in: CallbackIsolation(of: handler.isolation, calledFrom: isolation)
    ) { value, option in
      if option == .old {
        previous.value = value
      } else if option == .initial {
        call(ObservedChange(oldValue: value, newValue: value))
      } else if let oldValue = previous.value {
        call(ObservedChange(oldValue: oldValue, newValue: value))
      }
    }
  }
}

extension ReadOnlyObservable {
  /// `callback`, made to hold ``keptAliveByRegistrations`` for as long as the registration holds
  /// it: the one rule by which a registration keeps a derived chain alive, whatever its kind (an
  /// owner's, a token's through its observable, a binding's).
  ///
  /// On a derived observable this makes a cycle through its own list of observers, which ends
  /// when the entry goes: at once when it is removed (a cancelled token, `removeObserver`, an
  /// unbind), and at the observable's next round when its owner died (there is no hook that tells
  /// it sooner), when the entry is pruned.
  final func keepingAlive(_ callback: @escaping Callback) -> Callback {
    guard let chain = keptAliveByRegistrations else { return callback }
    return { value, option in
      withExtendedLifetime(chain) {}
      callback(value, option)
    }
  }
}

/// The `.old` value of the round in progress, for ``ReadOnlyObservable/observeChanges(isolation:_:)``.
private final class PreviousValue<Value> {
  var value: Value?
}
