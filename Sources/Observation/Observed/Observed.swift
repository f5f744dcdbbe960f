/// A property wrapper that stores a property in an ``Observable``, so a model class declares
/// observable properties as plain ones and exposes each observable with `$`.
///
/// ```swift
/// final class Player: Codable {
///   @Observed var name = "Ray"
///   @Observed var score = 0
/// }
///
/// let player = Player()
/// player.$score.map { "\($0) points" }.bind(to: scoreLabel, \.text)
/// player.score += 10  // a plain property to the model's own code; the label updates
/// ```
///
/// Reading and writing the property read and set ``Observable/value``, with its ordering and
/// threading rules; the projected value (`$score`) is the same ``Observable`` for the wrapper's
/// whole life, so it can be observed and bound like any other.
///
/// ## Codable, Equatable, Hashable
///
/// The wrapper is `Codable` when `Value` is, encoding just the value in a single-value
/// container: a class with `@Observed` properties keeps its synthesized `Codable` conformance,
/// and its JSON looks as if the properties were plain (`{"name":"Ray","score":0}`; an optional
/// property that is `nil` is left out, and a missing key decodes as `nil`). It is
/// `Equatable` and `Hashable` when `Value` is, comparing current values, and `Sendable` when
/// `Value` is.
///
/// > Note: The wrapper refers to its observable, so copies of it share one value. It is meant
/// > for properties of classes; in a struct, copies of the struct would share the property.
@propertyWrapper
public struct Observed<Value> {
  /// The observable that stores the value; `$property` in the enclosing type.
  ///
  /// It is created with the wrapper and never replaced, so observers and bindings made through
  /// it last as long as they would on any ``Observable``.
  public let projectedValue: Observable<Value>

  /// Creates the wrapper with the property's initial value, as in `@Observed var name = "Ray"`.
  ///
  /// - Parameter wrappedValue: The initial value.
  public init(wrappedValue: Value) {
    projectedValue = Observable(wrappedValue)
  }

  /// The current value: reading returns ``Observable/value``, setting it notifies observers.
  ///
  /// Setting does not mutate the wrapper itself (the value lives in the observable), so a `let`
  /// property of a class can still be set through the wrapper's enclosing instance.
  public var wrappedValue: Value {
    get { projectedValue.value }
    nonmutating set { projectedValue.value = newValue }
  }
}

// The only stored property is an immutable reference to an `Observable`, which is `Sendable`
// when `Value` is.
extension Observed: Sendable where Value: Sendable {}

extension Observed: Equatable where Value: Equatable {
  /// Whether the two wrappers currently hold equal values.
  ///
  /// - Parameters:
  ///   - lhs: A wrapper.
  ///   - rhs: Another wrapper.
  /// - Returns: `lhs.wrappedValue == rhs.wrappedValue`.
  public static func == (lhs: Observed, rhs: Observed) -> Bool {
    lhs.wrappedValue == rhs.wrappedValue
  }
}

extension Observed: Hashable where Value: Hashable {
  /// Hashes the current value.
  ///
  /// - Parameter hasher: The hasher to feed.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(wrappedValue)
  }
}

extension Observed: CustomStringConvertible {
  /// The current value's description, so `print(player)` shows values, not observables.
  public var description: String {
    String(describing: wrappedValue)
  }
}
