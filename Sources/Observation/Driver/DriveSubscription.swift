/// One subscriber of a ``Driver``: a token's closure, or a target-owned drive.
///
/// `joined` and `isActive` are guarded by the driver's locks (see `Driver`).
///
/// Not generic: the driver's code is unspecialized, and every use of a generic class built from
/// the driver's value (its list, an element of it) would cost a metadata look-up per value on
/// the main queue. The handler takes the value through a pointer instead; only the driver,
/// which knows the value's type, calls it.
final class DriveSubscription {
  /// The identity of the owning ``ObservationToken``, or `nil` when the target owns the drive.
  let tokenIdentity: UInt?
  /// The target that owns the drive; `nil` for token subscriptions.
  weak var target: AnyObject?
  /// Called on the driver's main queue with a pointer to each value for this subscriber, a
  /// value of the driver's `Value` type.
  private let handler: (UnsafeRawPointer) -> Void
  /// The driver's sequence number when the subscriber joined: it gets broadcasts numbered after
  /// it, and a replay of the value current at that moment.
  var joined: UInt64 = 0
  /// Cleared once the subscription ends, so deliveries already queued skip it.
  var isActive = true

  init<Value>(tokenIdentity: UInt, handler: @escaping (Value) -> Void) {
    self.tokenIdentity = tokenIdentity
    self.target = nil
    self.handler = Self.erase(handler)
  }

  init<Value>(target: AnyObject, handler: @escaping (Value) -> Void) {
    self.tokenIdentity = nil
    self.target = target
    self.handler = Self.erase(handler)
  }

  private static func erase<Value>(
    _ handler: @escaping (Value) -> Void
  ) -> (UnsafeRawPointer) -> Void {
    { pointer in handler(pointer.assumingMemoryBound(to: Value.self).pointee) }
  }

  /// Calls the handler with the value `pointer` points to, which must be of the `Value` type
  /// the subscription was made with.
  func send(_ pointer: UnsafeRawPointer) {
    handler(pointer)
  }

  var isTargetOwned: Bool { tokenIdentity == nil }

  /// Whether a target-owned drive has lost its target. Costs a weak load.
  var hasLostTarget: Bool { isTargetOwned && target == nil }
}
