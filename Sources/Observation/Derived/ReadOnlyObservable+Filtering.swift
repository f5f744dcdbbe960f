// Filtering: derived observables that skip some of their source's values. A read-only
// observable always has a value, so each operator takes the value to start with when the
// source's current value is rejected.

extension ReadOnlyObservable {
  /// Returns a read-only observable that holds this observable's values that satisfy
  /// `isIncluded`, starting with `initial` if the current value does not.
  ///
  /// ```swift
  /// // The last plausible age; 0 until there is one.
  /// let lastValidAge = person.age.filter(initial: 0) { (0...150).contains($0) }
  /// lastValidAge.map { "\($0) years" }.bind(to: label, \.text)
  /// ```
  ///
  /// **The first value**: the derived observable starts with this observable's current value
  /// if `isIncluded` accepts it, and with `initial` otherwise. Later, each change that
  /// `isIncluded` accepts is published (also when it equals the previous one); a change it
  /// rejects publishes nothing and leaves the derived value as it was.
  ///
  /// Lifetime and threading are those of ``map(_:)``: the result keeps this observable alive,
  /// `isIncluded` runs once per change on the thread that delivers it, never concurrently with
  /// itself, and no lock is held while it runs.
  ///
  /// - Parameters:
  ///   - initial: The value to start with when the current value is rejected.
  ///   - isIncluded: Returns `true` for a value to publish.
  /// - Returns: A read-only observable of the accepted values.
  public func filter(
    initial: Value,
    _ isIncluded: @escaping @Sendable (Value) -> Bool
  ) -> ReadOnlyObservable<Value> {
    compactMapping(initial: initial) { isIncluded($0) ? $0 : nil }
  }

  /// Returns a read-only observable that holds the non-`nil` results of `transform` applied to
  /// this observable's values, starting with `initial` if the result for the current value is
  /// `nil`.
  ///
  /// ```swift
  /// // The number in a text field, while the text is one; 0 until it first is.
  /// let quantityField = TextField()
  /// let quantity = quantityField.text.compactMap(initial: 0) { Int($0) }
  /// quantity.map { "\($0) items" }.bind(to: label, \.text)
  /// ```
  ///
  /// **The first value**: the derived observable starts with `transform` of this observable's
  /// current value if that is not `nil`, and with `initial` otherwise. Later, each change is
  /// transformed; a non-`nil` result is published (also when it equals the previous one), and
  /// a `nil` result publishes nothing and leaves the derived value as it was.
  ///
  /// Lifetime and threading are those of ``map(_:)``.
  ///
  /// - Parameters:
  ///   - initial: The value to start with when `transform` returns `nil` for the current value.
  ///   - transform: Converts a value, or returns `nil` to skip it. It runs once per change,
  ///     never concurrently with itself.
  /// - Returns: A read-only observable of the non-`nil` results.
  public func compactMap<Result>(
    initial: Result,
    _ transform: @escaping @Sendable (Value) -> Result?
  ) -> ReadOnlyObservable<Result> {
    compactMapping(initial: initial, transform)
  }

  private func compactMapping<Result>(
    initial: Result,
    _ transform: @escaping (Value) -> Result?
  ) -> ReadOnlyObservable<Result> {
    // `.initial` always publishes: `initial` when the current value is rejected.
    deriveInline { link in
      { value, option in
        if let result = transform(value) {
          link.publish(result, option)
        } else if option == .initial {
          link.publish(initial, option)
        }
      }
    }
  }
}
