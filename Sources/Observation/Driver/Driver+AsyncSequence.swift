extension Driver where Value: Sendable {
  /// The driver's values as an asynchronous sequence: the current value, then every change,
  /// produced on the main queue in order.
  ///
  /// ```swift
  /// for await status in model.status.asDriver().values {
  ///   statusLabel.text = status
  /// }
  /// ```
  ///
  /// Each read of the property makes one subscriber of the driver at once (so the current value
  /// is buffered even before iteration starts); it ends when the loop ends (a `break`, or
  /// cancellation of the iterating task) or the sequence is released, which cancels the
  /// subscription. Values are buffered
  /// without limit until the loop takes them, so a slow loop sees every value; with
  /// ``DeliveryPolicy/coalescing`` the driver delivers fewer. The sequence never finishes by
  /// itself.
  public var values: AsyncStream<Value> {
    AsyncStream { continuation in
      let token = drive { continuation.yield($0) }
      continuation.onTermination = { _ in token.cancel() }
    }
  }
}
