/// The user's callback behind a lane, which holds it weakly: once the registration releases its
/// closure (it ended), calls still waiting in the lane find nothing to run. It checks the owner
/// itself, because a call that waited in a lane runs after the round let go of the owner.
final class ConfinedCallback<Value> {
  private let callback: (Value, ObservableOptions) -> Void
  private weak var owner: AnyObject?
  private let hasOwner: Bool

  init(_ callback: @escaping (Value, ObservableOptions) -> Void, owner: AnyObject?) {
    self.callback = callback
    self.owner = owner
    self.hasOwner = owner != nil
  }

  func run(_ value: Value, _ option: ObservableOptions) {
    guard hasOwner else { return callback(value, option) }
    // A dead owner is never called, not even for a call that was waiting when it died.
    guard let owner else { return }
    callback(value, option)
    withExtendedLifetime(owner) {}
  }

  /// ``run(_:_:)`` for consecutive calls of one batch of a main-queue lane: `held` keeps the
  /// owner that an earlier call of the batch loaded, so a call loads the weak reference (whose
  /// count a background producer's rounds change at the same time) once per batch, not once per
  /// call. The owner is dead once `held` is its only strong reference: the call is then dropped
  /// and the owner released at once, as it would have been without `held`.
  ///
  /// - Parameters:
  ///   - value: The call's value.
  ///   - option: The option delivered.
  ///   - held: The owner held for the batch, `nil` at its start; the caller releases it at the
  ///     end of the batch, outside any lock.
  func run(_ value: Value, _ option: ObservableOptions, holding held: inout AnyObject?) {
    guard hasOwner else { return callback(value, option) }
    if held == nil {
      guard let owner else { return }
      held = owner
    } else if isKnownUniquelyReferenced(&held) {
      held = nil
      return
    }
    callback(value, option)
  }
}
