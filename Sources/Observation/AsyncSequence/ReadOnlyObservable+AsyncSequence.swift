extension ReadOnlyObservable {
  /// The current value, then every change in order, as an asynchronous sequence that keeps every
  /// value.
  ///
  /// ```swift
  /// Task {
  ///   for await name in user.name.values {
  ///     print("User's name is \(name)")
  ///   }
  /// }
  /// ```
  ///
  /// The first element is the value current when the loop starts; then each set produces one
  /// element, in the order the sets happened, also the sets made while the loop body was busy or
  /// the task was waiting to be scheduled. The loop ends when its task is cancelled. Use
  /// ``values(bufferingPolicy:)`` with ``ObservableValues/BufferingPolicy/newest`` to skip values
  /// the loop has fallen behind on.
  ///
  /// The sequence keeps this observable alive while it is being iterated, and no longer: see
  /// ``ObservableValues``.
  public var values: ObservableValues<Value> {
    ObservableValues(observable: self, bufferingPolicy: .unbounded)
  }

  /// The current value, then every change in order, as an asynchronous sequence with the given
  /// buffering.
  ///
  /// ```swift
  /// for await position in player.position.values(bufferingPolicy: .newest) {
  ///   await slider.animate(to: position)  // a slow body skips to the latest position
  /// }
  /// ```
  ///
  /// - Parameter bufferingPolicy: ``ObservableValues/BufferingPolicy/unbounded`` to keep every
  ///   value (what ``values`` does), or ``ObservableValues/BufferingPolicy/newest`` to keep only
  ///   the newest value the loop has not taken yet.
  /// - Returns: A sequence whose every iterator yields the value current when it starts, then
  ///   the changes after it.
  public func values(
    bufferingPolicy: ObservableValues<Value>.BufferingPolicy
  ) -> ObservableValues<Value> {
    ObservableValues(observable: self, bufferingPolicy: bufferingPolicy)
  }
}
