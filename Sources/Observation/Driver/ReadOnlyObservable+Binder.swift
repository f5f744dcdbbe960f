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
  /// Like every registration, it keeps a derived observable alive while it lasts, so a chain
  /// built inline works; once the target is gone, the chain is released at its next change.
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
    // Owned by the target but not an `addObserver` registration: `removeIfExists` leaves it.
    // Like every registration, it keeps a derived source alive while it lasts (`keepingAlive`).
    let callback = keepingAlive { value, _ in send(value) }
    register(
      NewEntry(owner: target, kind: .owned, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback,
      sendsInitial: true
    )
  }
}
