// Two-way bindings between observables of different types, through a pair of conversions.

extension Observable {
  /// Keeps `other` showing this observable's value through `forward`, and sets this observable
  /// from `other` through `backward` whenever `backward` accepts `other`'s value.
  ///
  /// This binds a model to a control of another type, such as an `Int` to a text field's text:
  ///
  /// ```swift
  /// let quantity = Observable(1)
  /// let quantityField = TextField()
  /// let token = quantity.bindBidirectionally(
  ///   to: quantityField.text,
  ///   forward: { String($0) },
  ///   backward: { Int($0) }
  /// )
  /// quantityField.text.value = "12"   // quantity is now 12
  /// quantityField.text.value = "12a"  // rejected: quantity stays 12
  /// quantity.value = 3                // quantityField.text is now "3"
  /// ```
  ///
  /// **This observable wins at the moment of binding**: `other` is set to `forward(value)`
  /// before the call returns. Then each change of this observable sets `other` to its
  /// conversion, and each change of `other` for which `backward` returns a value sets this
  /// observable to it. When `backward` returns `nil` (text that is not a number), this
  /// observable is not set and keeps its value, and `other` keeps what was typed.
  ///
  /// Each change is forwarded exactly once, without an echo back to where it came from, as
  /// with ``bindBidirectionally(to:)-64px9``: typing `"007"` sets the model to `7` and leaves
  /// the field showing `"007"`, not `forward(7)`. A change made *in response* to a forwarded
  /// one (an observer of the model that clamps `150` to `100`) is forwarded like any other, so
  /// the field then shows `"100"`.
  ///
  /// ## Lifetime
  ///
  /// The binding lasts as long as the returned token: cancel or release it to end the binding.
  /// It holds neither observable strongly, and stops by itself when either of them is
  /// deallocated. Binding `other` two ways again, from any source, ends it first, as for the
  /// unconverted form; a one-way binding into `other` leaves it in place.
  ///
  /// > Important: `forward` runs synchronously on the thread that delivers this observable's
  /// > change and `backward` on the thread that delivers `other`'s, each never concurrently
  /// > with itself and with no lock held; the side they set notifies its observers there. As
  /// > for the unconverted form, two-way bindings are meant for sides set from one thread at a
  /// > time.
  ///
  /// - Parameters:
  ///   - other: The observable to keep in step with this one.
  ///   - forward: Converts this observable's value to `other`'s.
  ///   - backward: Converts `other`'s value to this observable's, or returns `nil` to leave this
  ///     observable unchanged.
  /// - Returns: The token that owns the binding.
  public func bindBidirectionally<Other>(
    to other: Observable<Other>,
    forward: @escaping @Sendable (Value) -> Other,
    backward: @escaping @Sendable (Other) -> Value?
  ) -> ObservationToken {
    require(other !== self, "An observable cannot be bound to itself.")
    let link = TwoWayLink(self, other, forward: forward, backward: backward)
    let token = ObservationToken(source: link)
    link.connect(self, other)
    return token
  }
}
