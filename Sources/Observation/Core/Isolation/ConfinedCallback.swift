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
}
