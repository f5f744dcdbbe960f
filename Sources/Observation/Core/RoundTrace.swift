/// A report of one round of an observable, for debugging who changed a value and who heard it.
///
/// Produced by ``ReadOnlyObservable/trace(as:_:)`` after each round, on the delivering thread.
/// Its ``description`` reads like a log line:
///
/// ```text
/// user.name: Madeline → Amelia (2 callbacks, 1 pruned)
/// ```
public struct RoundTrace: Sendable, Hashable, CustomStringConvertible {
  /// The name given to ``ReadOnlyObservable/trace(as:_:)``.
  public let name: String
  /// The value before the change, as `String(describing:)` prints it.
  public let oldValue: String
  /// The value after the change, as `String(describing:)` prints it.
  public let newValue: String
  /// How many callbacks ran in the round: `.old` and `.new` callbacks count separately.
  public let callbackCount: Int
  /// How many registrations were found with their owner gone during the round and pruned.
  public let prunedCount: Int

  /// The report as one log line: `name: old → new (N callbacks, M pruned)`.
  public var description: String {
    let callbacks = callbackCount == 1 ? "1 callback" : "\(callbackCount) callbacks"
    return "\(name): \(oldValue) → \(newValue) (\(callbacks), \(prunedCount) pruned)"
  }
}
