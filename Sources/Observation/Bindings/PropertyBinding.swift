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
  private let lock = Lock()
  private var isActive = true  // guarded by `lock`
  private weak var hub: (any BindingHubProtocol)?  // guarded by `lock`

  /// - Parameter key: The bound (target, key path) pair.
  init(key: BindingKey) {
    self.key = key
  }

  deinit {
    lock.deallocate()
  }

  /// Ends the binding: the target keeps its current value and receives no further changes.
  ///
  /// Calling it again, or after the binding was replaced or its target deallocated, does
  /// nothing. Called from another thread while the source is delivering a change, that change
  /// may still be applied.
  public func unbind() {
    BindingRegistry.shared.remove(self)
    deactivate()
  }

  /// Whether the binding still writes to its target; read on every delivery.
  var isApplying: Bool {
    lock.withLock { isActive }
  }

  /// Records the hub that delivers to this binding, so that ending the binding leaves it.
  func attach(to hub: any BindingHubProtocol) {
    let isActive = lock.withLock {
      self.hub = hub
      return self.isActive
    }
    // Replaced by another thread before it was attached: leave at once.
    if !isActive { hub.remove(self) }
  }

  /// Stops applying values and leaves the hub, which lets go of the derived chain it kept
  /// alive for this binding.
  func deactivate() {
    let hub: (any BindingHubProtocol)? = lock.withLock {
      isActive = false
      defer { self.hub = nil }
      return self.hub
    }
    hub?.remove(self)
  }
}

// Every mutable property is guarded by `lock`; `key` is immutable.
extension PropertyBinding: @unchecked Sendable {}
