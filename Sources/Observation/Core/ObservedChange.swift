/// One change of an observable: the value before a set and the value after it.
///
/// Delivered by ``ReadOnlyObservable/observeChanges(isolation:_:)`` once per set, in the position of a
/// `.new` callback.
public struct ObservedChange<Value> {
  /// The value before the set.
  public let oldValue: Value
  /// The value after the set.
  public let newValue: Value

  /// Creates a change from `oldValue` to `newValue`.
  ///
  /// - Parameters:
  ///   - oldValue: The value before the set.
  ///   - newValue: The value after the set.
  public init(oldValue: Value, newValue: Value) {
    self.oldValue = oldValue
    self.newValue = newValue
  }
}

extension ObservedChange: Sendable where Value: Sendable {}
extension ObservedChange: Equatable where Value: Equatable {}
extension ObservedChange: Hashable where Value: Hashable {}

extension ObservedChange: CustomStringConvertible {
  /// The change as `old → new`.
  public var description: String {
    "\(oldValue) → \(newValue)"
  }
}
