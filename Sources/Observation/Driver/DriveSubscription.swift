/// One subscriber of a ``Driver``: a token's closure, or a target-owned drive.
///
/// `joined` and `isActive` are guarded by the driver's lock.
final class DriveSubscription<Value> {
  /// The identity of the owning ``ObservationToken``, or `nil` when the target owns the drive.
  let tokenIdentity: UInt?
  /// The target that owns the drive; `nil` for token subscriptions.
  weak var target: AnyObject?
  /// Called on the driver's main queue with each value for this subscriber.
  let handler: (Value) -> Void
  /// The driver's sequence number when the subscriber joined: it gets broadcasts numbered after
  /// it, and a replay of the value current at that moment.
  var joined: UInt64 = 0
  /// Cleared once the subscription ends, so deliveries already queued skip it.
  var isActive = true

  init(tokenIdentity: UInt, handler: @escaping (Value) -> Void) {
    self.tokenIdentity = tokenIdentity
    self.target = nil
    self.handler = handler
  }

  init(target: AnyObject, handler: @escaping (Value) -> Void) {
    self.tokenIdentity = nil
    self.target = target
    self.handler = handler
  }

  var isTargetOwned: Bool { tokenIdentity == nil }

  /// Whether a target-owned drive has lost its target. Costs a weak load.
  var hasLostTarget: Bool { isTargetOwned && target == nil }
}
