/// A sink for values that updates a UI object on the main queue, never fails, and holds its
/// target weakly.
///
/// Create a binder once per property you want to feed, and bind observables or drivers to it:
///
/// ```swift
/// extension Spinner {
///   var isHiddenBinder: Binder<Bool> {
///     Binder(self) { spinner, isHidden in spinner.isHidden = isHidden }
///   }
/// }
///
/// model.isLoading.map { !$0 }.bind(to: spinner.isHiddenBinder)
/// ```
///
/// ``send(_:)`` performs the update on the main queue: at once when called there with nothing of
/// this binder still waiting, otherwise queued with `DispatchQueue.main.async`, always in the
/// order the values were sent (the rules of ``MainScheduler``). Copies of a binder share one
/// queue. Once the target has been deallocated, values are dropped silently.
///
/// > Important: Values cross from the sending thread to the main queue; use `Sendable` values.
public struct Binder<Value> {
  private weak var weakTarget: AnyObject?
  private let lane: MainQueueLane<Value, UInt64>

  /// Creates a binder that calls `binding` with `target` and each value, on the main queue.
  ///
  /// - Parameters:
  ///   - target: The object to update, held weakly.
  ///   - scheduler: Where updates run; ``MainScheduler/current`` by default (the main queue
  ///     unless a test overrides it).
  ///   - binding: Applies a value to the target, on the main queue. It is not called once the
  ///     target has been deallocated.
  public init<Target: AnyObject & Sendable>(
    _ target: Target,
    scheduler: MainScheduler = .current,
    binding: @escaping @MainActor @Sendable (Target, Value) -> Void
  ) {
    weakTarget = target
    lane = MainQueueLane(scheduler: scheduler) { [weak target] value in
      guard let target else { return }
      scheduler.runOnMainActor(binding, with: (target, value))
    }
  }

  /// The target, or `nil` once it has been deallocated.
  var target: AnyObject? { weakTarget }

  /// Applies `value` to the target on the main queue.
  ///
  /// Called on the main queue with nothing of this binder waiting, it applies the value before
  /// returning; otherwise the value is queued and applied after the values sent before it. Safe
  /// to call from any thread. Does nothing once the target is gone.
  ///
  /// - Parameter value: The value to apply.
  public func send(_ value: Value) {
    guard weakTarget != nil else { return }
    if lane.submit(value) { lane.drain() }
  }
}

// The target is a weak reference written only in `init` (a weak load is atomic); the lane guards
// its queue with its own lock (`MainQueueLane`); and the binding closure, `@MainActor`, runs only
// on the main queue.
extension Binder: @unchecked Sendable where Value: Sendable {}
