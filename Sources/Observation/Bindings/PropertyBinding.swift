/// A binding made by `bind(to:_:)` or `bind(to:)`: the handle that can end it early.
///
/// The *target* owns a key-path binding, not this handle: the binding lasts until the target is
/// deallocated, so you may discard the handle (the `bind` methods are `@discardableResult`).
/// Keep it only to end the binding before that:
///
/// ```swift
/// @MainActor
/// final class ScoreView {
///   var scoreText = ""
///   private var liveScore: PropertyBinding?
///
///   func show(_ player: Player) {
///     // Binding the same (target, key path) again replaces the earlier binding by itself.
///     liveScore = player.$score.map { "\($0) points" }.bind(to: self, \.scoreText)
///   }
///
///   func freeze() {
///     liveScore?.unbind()  // keeps showing the last score
///   }
/// }
/// ```
///
/// A binding also ends when:
/// - the same (target, key path) pair is bound again one way, from any source (a two-way
///   binding of an observable is of another kind, and neither ends the other);
/// - `removeObserver(target)` is called on its source.
///
/// > Important: Ending a binding stops it from writing to its target at once, and releases the
/// > derived chain it kept alive. A binding ended on one thread while its source is being set
/// > on another may still apply the value of that one in-flight change.
public final class PropertyBinding {
  let key: BindingKey
  /// The observable the binding's registration lives in. Weak: a binding never keeps a model's
  /// observable alive (its registration keeps a derived one). Written only in `init`.
  private weak var source: (any RegistrationRemoving)?
  /// Set by `unbind()`, guarded by the binding's lock stripe: a binding replaced by another
  /// thread before its registration was made removes that registration itself.
  private var isEnded = false

  /// - Parameters:
  ///   - source: The observable whose registration this binding identifies.
  ///   - key: The bound (target, key path) pair.
  init(source: any RegistrationRemoving, key: BindingKey) {
    self.source = source
    self.key = key
  }

  /// Ends the binding: the target keeps its current value and receives no further changes.
  ///
  /// Calling it again, or after the binding was replaced or its target deallocated, does
  /// nothing. Called from another thread while the source is delivering a change, that change
  /// may still be applied; no later one is.
  public func unbind() {
    let lock = LockStripes.lock(for: self)
    lock.withLock { isEnded = true }
    BindingRegistry.shared.remove(self)
    source?.removeRegistration(identifiedBy: self)
  }

  /// Called once the binding's registration exists: if `unbind()` ran before that (another
  /// thread rebound the pair meanwhile), the registration it could not find is removed now.
  func registrationDidStart() {
    let lock = LockStripes.lock(for: self)
    guard lock.withLock({ isEnded }) else { return }
    source?.removeRegistration(identifiedBy: self)
  }
}

// `key` is immutable, `source` is written only in `init` (a weak load is atomic), and `isEnded`
// is guarded by the binding's lock stripe.
extension PropertyBinding: @unchecked Sendable {}

extension PropertyBinding: ReplaceableBinding {}
