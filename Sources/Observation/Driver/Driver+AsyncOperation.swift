extension Driver where Value: Sendable {
  /// Creates a driver of the result of an asynchronous, throwing operation, which runs once
  /// (when the first subscriber arrives) however many subscribers drive it, and delivers
  /// `fallback` if it throws.
  ///
  /// The RxCocoa tutorial's "one text change, two labels, two network requests" becomes one
  /// request:
  ///
  /// ```swift
  /// let summary = Driver(initialValue: "Loading…", onErrorJustReturn: "Unavailable") {
  ///   try await api.summary(for: query)
  /// }
  /// summary.drive(titleLabel, \.text)
  /// summary.drive(with: self) { controller, text in
  ///   controller.countLabel.text = "\(text.count) characters"
  /// }
  /// ```
  ///
  /// Subscribers first receive `initialValue`, then the operation's result (or `fallback`).
  /// Subscribers that come later receive the latest of these. The operation runs in an
  /// unstructured `Task` that is not cancelled when subscribers leave; its result is kept for
  /// later subscribers and the operation never runs again.
  ///
  /// - Parameters:
  ///   - initialValue: The value delivered until the operation finishes.
  ///   - fallback: The value delivered if the operation throws.
  ///   - policy: Every value in order (the default), or the latest per main-queue turn.
  ///   - scheduler: The main queue (``MainScheduler/current``), or a test stand-in.
  ///   - operation: The work, started with the first subscriber.
  public convenience init(
    initialValue: Value,
    onErrorJustReturn fallback: Value,
    policy: DeliveryPolicy = .everyValue,
    scheduler: MainScheduler = .current,
    operation: @escaping @Sendable () async throws -> Value
  ) {
    let result = Observable(initialValue)
    let start = StartOnce()
    self.init(policy: policy, scheduler: scheduler) { receive in
      let token = result.observe(options: [.initial, .new], in: .delivering) { value, _ in
        receive(value)
      }
      if start.claim() {
        Task {
          do {
            result.value = try await operation()
          } catch {
            result.value = fallback
          }
        }
      }
      return token
    }
  }
}

/// A flag that one caller, the first, may claim.
///
/// `@unchecked Sendable`: `isClaimed` is guarded by `lock`.
private final class StartOnce: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  @exclusivity(unchecked) private var isClaimed = false

  deinit {
    lock.deallocate()
  }

  func claim() -> Bool {
    lock.withLock {
      defer { isClaimed = true }
      return !isClaimed
    }
  }
}
