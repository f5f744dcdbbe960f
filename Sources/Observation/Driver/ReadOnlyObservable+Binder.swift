extension ReadOnlyObservable {
  /// Sends the current value and every change to `binder`, which applies them on the main queue,
  /// for as long as the binder's target lives.
  ///
  /// ```swift
  /// download.isFinished.bind(to: Binder(doneButton) { button, isFinished in
  ///   button.isEnabled = isFinished
  /// })
  /// ```
  ///
  /// The registration is owned by the binder's target, held weakly: it ends by itself when the
  /// target is deallocated, and ``removeObserver(_:)`` with the target ends it earlier. There is
  /// no token to keep. It is added beside the target's other registrations on this observable.
  /// A derived observable bound this way is kept alive by the binding, so a chain built inline
  /// works; it is released once the target is gone, at the chain's next change at the latest.
  /// If the target is already gone, nothing happens.
  ///
  /// The values leave this observable on the thread that set them (see ``Observable``) and
  /// reach the target on the main queue, in order.
  ///
  /// - Parameter binder: The binder to feed.
  public func bind(to binder: Binder<Value>) {
    deliver(toBinderOf: binder.target) { binder.send($0) }
  }

  /// Sends the current value and every change to `binder`, which applies them on the main queue,
  /// for as long as the binder's target lives: the form for a binder of optional values, such as
  /// a label's `text: String?`.
  ///
  /// ```swift
  /// let textBinder = Binder<String?>(titleLabel) { label, text in label.text = text }
  /// model.title.bind(to: textBinder)  // model.title: Observable<String>
  /// ```
  ///
  /// Everything else is as described on ``bind(to:)-(Binder<Value>)``: the binder's target owns
  /// the registration, and the values reach it on the main queue, in order.
  ///
  /// - Parameter binder: The binder to feed.
  public func bind(to binder: Binder<Value?>) {
    deliver(toBinderOf: binder.target) { binder.send($0) }
  }

  /// Registers `send` for the current value and every change, owned by `target`.
  private func deliver(toBinderOf target: AnyObject?, _ send: @escaping (Value) -> Void) {
    guard let target else { return }
    // A root `Observable` is owned by its model and must not be kept by a view's binding; a
    // derived one has no owner but its users, so the binding keeps it (its own entry holds it
    // until the entry is pruned after the target's death).
    let chain: ReadOnlyObservable<Value>? = self is Observable<Value> ? nil : self
    // Owned by the target but not an `addObserver` registration: `removeIfExists` leaves it.
    let callback: Callback = { value, _ in withExtendedLifetime(chain) { send(value) } }
    register(
      NewEntry(owner: target, kind: .owned, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback
    )
  }
}
