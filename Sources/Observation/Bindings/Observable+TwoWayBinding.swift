// Two-way bindings between two settable observables.
//
// Named `bindBidirectionally(to:)` to read as the two-way form of `bind(to:)`: the receiver's
// value flows to the argument at once, exactly as with `bind(to:)`, and from then on changes
// flow both ways. `model.name.bindBidirectionally(to: field.text)` reads as what it does: the
// field starts with the model's name, and edits in the field go back to the model.

extension Observable {
  /// Keeps this observable and `other` equal: `other` takes this observable's value at once,
  /// then a change of either sets the other one, once.
  ///
  /// ```swift
  /// let token = profile.name.bindBidirectionally(to: nameField.text)
  /// nameField.text.value = "Ada"   // profile.name is now "Ada"
  /// profile.name.value = "Grace"   // nameField.text is now "Grace"
  /// ```
  ///
  /// **This observable wins at the moment of binding**: `other` is set to this observable's
  /// value before the call returns (like `bind(to:)`), so bind the model
  /// to the field, not the field to the model.
  ///
  /// Each change is forwarded exactly once, without an echo back to where it came from: the
  /// loop guard counts the changes the binding itself causes, so it works for any `Value`, not
  /// only `Equatable` ones (for those, an overload also skips sets that would not change the
  /// other side).
  ///
  /// ## Lifetime
  ///
  /// The binding lasts as long as the returned token: cancel or release it to end the binding.
  /// It holds neither observable strongly, so it never keeps the form or the model alive, and
  /// it stops by itself when either of them is deallocated.
  ///
  /// ## Rebinding replaces
  ///
  /// As with a one-way `bind(to:)`, `other` has one two-way binding at a time: binding it two
  /// ways again, from any source, ends the earlier two-way binding first. (A one-way
  /// `bind(to: other)` is a binding of another kind: it feeds `other`, and leaves its two-way
  /// binding in place, as this one leaves it.) A reused form cell that
  /// binds its field to the next model simply binds again; the old model no longer receives
  /// what is typed, and is not set to the new model's value:
  ///
  /// ```swift
  /// let (oldProfile, newProfile) = (Profile(), Profile())
  /// oldProfile.name.bindBidirectionally(to: nameField.text).store(in: bag)
  /// newProfile.name.bindBidirectionally(to: nameField.text).store(in: bag)  // ends the first
  /// nameField.text.value = "Ada"  // newProfile.name is "Ada"; oldProfile.name is unchanged
  /// ```
  ///
  /// Binding this observable to a second `other` keeps both bindings: one model may fill
  /// several fields.
  ///
  /// > Important: The other side is set synchronously on the thread delivering the change, and
  /// > its observers run there. Two-way bindings are meant for sides set from one thread at a
  /// > time (typically the main thread); if both sides are set at the same moment from
  /// > different threads, they can end up holding those two different values.
  ///
  /// - Parameter other: The observable to keep equal to this one. Binding an observable to
  ///   itself is a programming error (a precondition failure).
  /// - Returns: The token that owns the binding.
  public func bindBidirectionally(to other: Observable<Value>) -> ObservationToken {
    makeTwoWayBinding(to: other, isRedundant: nil)
  }

  fileprivate func makeTwoWayBinding(
    to other: Observable<Value>,
    isRedundant: ((Value, Value) -> Bool)?
  ) -> ObservationToken {
    require(other !== self, "An observable cannot be bound to itself.")
    let link = TwoWayLink(
      self, other, forward: { $0 }, backward: { $0 },
      isRedundantForward: isRedundant, isRedundantBackward: isRedundant)
    let token = ObservationToken(source: link)
    link.connect(self, other)
    return token
  }
}

extension Observable where Value: Equatable {
  /// Keeps this observable and `other` equal, skipping sets that would not change the other
  /// side: `other` takes this observable's value at once (unless it is equal already), then a
  /// change of either sets the other one, once, if the values differ.
  ///
  /// ```swift
  /// let token = settings.volume.bindBidirectionally(to: slider.value)
  /// ```
  ///
  /// Everything else is as described on the general form: this observable wins at the moment of
  /// binding, the loop guard does not depend on equality, the returned token owns the binding,
  /// neither side is kept alive, and binding `other` two ways again ends this binding.
  ///
  /// - Parameter other: The observable to keep equal to this one. Binding an observable to
  ///   itself is a programming error (a precondition failure).
  /// - Returns: The token that owns the binding.
  public func bindBidirectionally(to other: Observable<Value>) -> ObservationToken {
    makeTwoWayBinding(to: other, isRedundant: ==)
  }
}
