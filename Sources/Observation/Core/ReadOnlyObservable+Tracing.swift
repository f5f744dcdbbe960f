extension ReadOnlyObservable {
  /// Reports every later round of this observable to `handler`, for debugging.
  ///
  /// Each report names the observable, shows the old and new value, and counts the callbacks
  /// that ran and the registrations pruned because their owner was gone. `handler` runs after
  /// the round's callbacks, on the delivering thread, with no lock held. Calling this again
  /// replaces the handler; ``stopTracing()`` removes it. Tracing is off by default and costs
  /// nothing measurable while off: values are only formatted while a handler is set.
  ///
  /// ```swift
  /// user.name.trace(as: "user.name") { print($0) }
  /// user.name.value = "Amelia"
  /// // user.name: Madeline → Amelia (2 callbacks, 0 pruned)
  /// ```
  ///
  /// - Parameters:
  ///   - name: The name that identifies this observable in the reports.
  ///   - handler: Receives one ``RoundTrace`` per round, on the delivering thread (hence
  ///     `@Sendable`).
  public func trace(as name: String, _ handler: @escaping @Sendable (RoundTrace) -> Void) {
    setTracer(Tracer(name: name, handler: handler))
  }

  /// Stops the reports started by ``trace(as:_:)``; rounds already running may still report.
  public func stopTracing() {
    setTracer(nil)
  }
}

extension ReadOnlyObservable {
  /// Starts or (with `nil`) stops reporting rounds; see ``trace(as:_:)``.
  final func setTracer(_ newTracer: Tracer?) {
    let previous: Tracer? = lock.withLock {
      let delivery = makeDeliveryIfNeeded()
      defer { delivery.tracer = newTracer }
      return delivery.tracer
    }
    withExtendedLifetime(previous) {}
  }
}

/// Where ``ReadOnlyObservable/trace(as:_:)`` sends its reports.
struct Tracer {
  let name: String
  let handler: (RoundTrace) -> Void
}
