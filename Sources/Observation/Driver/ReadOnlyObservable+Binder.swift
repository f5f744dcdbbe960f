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
    guard let target = binder.target else { return }
    // A root `Observable` is owned by its model and must not be kept by a view's binding; a
    // derived one has no owner but its users, so the binding keeps it (its own entry holds it
    // until the entry is pruned after the target's death).
    let chain: ReadOnlyObservable<Value>? = self is Observable<Value> ? nil : self
    // Owned by the target but not an `addObserver` registration: `removeIfExists` leaves it.
    let callback: Callback = { value, _ in withExtendedLifetime(chain) { binder.send(value) } }
    register(
      Entry(owner: target, kind: .owned, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback
    )
  }
}
