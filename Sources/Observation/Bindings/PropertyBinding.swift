/// A binding made by `bind(to:_:)` or `bind(to:)`: the handle that can end it early.
///
/// The *target* owns a key-path binding, not this handle: the binding lasts until the target is
/// deallocated, so you may discard the handle (the `bind` methods are `@discardableResult`).
/// Keep it only to end the binding before that:
///
/// ```swift
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
/// - the same (target, key path) pair is bound again, from any source;
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
    BindingRegistry.shared.remove(self)
    source?.removeRegistration(identifiedBy: self)
  }
}

// `key` is immutable and `source` is written only in `init`; a weak load is atomic.
extension PropertyBinding: @unchecked Sendable {}
