// One-way bindings: push an observable's value into a property of an object, or into another
// observable.

extension ReadOnlyObservable {
  /// Writes the current value to `target[keyPath: keyPath]` at once, then every change, for as
  /// long as `target` lives.
  ///
  /// ```swift
  /// @MainActor
  /// final class ProgressCell {
  ///   var progressText = ""
  ///
  ///   func show(_ download: Download) {
  ///     download.progress.map { "\(Int($0 * 100))%" }.bind(to: self, \.progressText)
  ///   }
  /// }
  /// ```
  ///
  /// ## Lifetime
  ///
  /// The target owns the binding. It is held weakly, and the binding ends by itself when it is
  /// deallocated; the returned ``PropertyBinding`` can end it earlier, and discarding it does
  /// not. `removeObserver(target)` on this observable ends it too.
  ///
  /// The binding never keeps an ``Observable`` alive. Like every registration, it does keep a
  /// *derived* observable (``map(_:)``, ``combineLatest(_:)``, …) alive, with its sources, while
  /// the binding lasts: a chain built inline in the call, as above, keeps delivering until the
  /// target dies, and is released when the derived observable next publishes after that (for a
  /// `map`, at the source's next change).
  ///
  /// ## Rebinding replaces
  ///
  /// Binding a (target, key path) pair that already has a one-way binding from this library
  /// ends the earlier binding first, whatever its source. A reused cell that shows another model
  /// simply binds again; the old model's later changes never reach it, and no bag is needed.
  ///
  /// > Important: The property is written synchronously, on the thread that delivers the
  /// > change (the thread that set the source, or the one already delivering it), in the order
  /// > of the changes; a test can read it right after setting the source. The current value is
  /// > written before `bind` returns, unless another thread is delivering a change of the
  /// > source at that moment: then that thread writes it, before any later change. To update a
  /// > view on the main queue from changes made elsewhere, bind to a `Binder` instead.
  ///
  /// - Parameters:
  ///   - target: The object to write to, held weakly; `Sendable`, since the property may be
  ///     written on the delivering thread (a `@MainActor` view is).
  ///   - keyPath: The property to write.
  ///   - isolation: Where the property is written: by default the isolation of the calling
  ///     code, so a binding made on the main actor writes on the main actor. See the Threading article.
  /// - Returns: A handle that can end the binding early.
  @discardableResult
  public func bind<Target: AnyObject & Sendable>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> PropertyBinding {
    installBinding(target, keyPath, isolation: CallbackIsolation(isolation)) { target, value in
      target[keyPath: keyPath] = value
    }
  }

  /// Writes the current value to the optional property `target[keyPath: keyPath]` at once, then
  /// every change, for as long as `target` lives.
  ///
  /// This is the form for properties such as a label's `text: String?`. It behaves exactly like
  /// the non-optional form: the target is held weakly and owns the binding, rebinding the same
  /// (target, key path) pair replaces the earlier binding, and the property is written
  /// synchronously on the delivering thread.
  ///
  /// ```swift
  /// model.title.bind(to: titleLabel, \.text)  // text: String?
  /// ```
  ///
  /// - Parameters:
  ///   - target: The object to write to, held weakly; `Sendable`, since the property may be
  ///     written on the delivering thread (a `@MainActor` view is).
  ///   - keyPath: The optional property to write.
  ///   - isolation: Where the property is written: by default the isolation of the calling
  ///     code, so a binding made on the main actor writes on the main actor. See the Threading article.
  /// - Returns: A handle that can end the binding early.
  @discardableResult
  public func bind<Target: AnyObject & Sendable>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value?>,
    isolation: isolated (any Actor)? = #isolation
  ) -> PropertyBinding {
    installBinding(target, keyPath, isolation: CallbackIsolation(isolation)) { target, value in
      target[keyPath: keyPath] = value
    }
  }

  /// Sets `other`'s value to this observable's value at once, then to every change, for as long
  /// as `other` lives.
  ///
  /// ```swift
  /// let displayedName = Observable("")
  /// user.name.bind(to: displayedName)
  /// ```
  ///
  /// This is a key-path binding of `other`'s ``Observable/value``, with the same lifetime: the
  /// target observable owns it and is held weakly, the binding ends when `other` is
  /// deallocated, when the returned handle is unbound, when `removeObserver(other)` is called
  /// on this observable, or when `other` is bound again one way from any source (the new
  /// binding replaces it). A two-way binding of `other` is a binding of another kind: this one
  /// feeds it and does not end it, nor does it end this one. It never keeps this observable
  /// alive unless it is a derived one.
  ///
  /// Every change of this observable sets `other`, and `other`'s observers run synchronously on
  /// the delivering thread. Binding two observables to each other this way would set them back
  /// and forth forever; use `bindBidirectionally(to:)` instead.
  ///
  /// - Parameter other: The observable to set. Binding an observable to itself is a
  ///   programming error (a precondition failure).
  /// - Returns: A handle that can end the binding early.
  @discardableResult
  public func bind(to other: Observable<Value>) -> PropertyBinding {
    require(other !== self, "An observable cannot be bound to itself.")
    // Another observable is thread-safe: write to it on the delivering thread.
    return installBinding(other, \Observable<Value>.value, isolation: .delivering) {
      other, value in other.value = value
    }
  }

  /// Replaces the binding of (`target`, `keyPath`) with one from this observable that calls
  /// `apply` with the current value and each change while `target` lives.
  private func installBinding<Target: AnyObject>(
    _ target: Target,
    _ keyPath: AnyKeyPath,
    isolation: CallbackIsolation,
    apply: @escaping (Target, Value) -> Void
  ) -> PropertyBinding {
    let binding = PropertyBinding(
      source: self,
      key: BindingKey(target: ObjectIdentifier(target), keyPath: keyPath, kind: .oneWay)
    )
    // Rebinding replaces: end the pair's earlier binding, on whichever source it lives.
    BindingRegistry.shared.install(binding, target: target)?.unbind()
    // One registration, owned weakly by the target and removable through the binding. Its
    // closure keeps the binding (the handle's identity must not be reused while the entry
    // exists) and, like every registration, a derived source alive (`keepingAlive`).
    let callback: Callback
    if case .delivering = isolation {
      callback = { [unowned(unsafe) target] value, _ in
        // The delivery loop holds the target strongly around the call (it loads the weak
        // owner once), so the unowned(unsafe) capture is never dangling here.
        apply(target, value)
        withExtendedLifetime(binding) {}
      }
    } else {
      // The write may wait for the target's actor, after the delivery loop let go of it.
      callback = { [weak target] value, _ in
        guard let target else { return }
        apply(target, value)
        withExtendedLifetime(binding) {}
      }
    }
    register(
      NewEntry(
        owner: target,
        handle: binding,
        options: [.initial, .new],
        callback: isolation.confine(
          keepingAlive(callback), owner: target, key: .handle(binding, ownedBy: target), on: self)
      ),
      replacing: false,
      initial: callback,
      sendsInitial: true
    )
    binding.registrationDidStart()
    return binding
  }
}
