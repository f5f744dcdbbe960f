extension ReadOnlyObservable {
  /// Returns a ``Driver`` that delivers this observable's values on the main queue, shared by
  /// all of its subscribers.
  ///
  /// ```swift
  /// let progress = download.progress.asDriver(policy: .coalescing)
  /// let token = progress.drive { [progressView] in progressView.fraction = $0 }
  /// ```
  ///
  /// Each call makes a new driver; store it to share one upstream registration among several
  /// subscribers. The driver keeps this observable alive.
  ///
  /// - Parameters:
  ///   - policy: Every value in order (the default), or the latest per main-queue turn.
  ///   - scheduler: The main queue (``MainScheduler/current``, which is ``MainScheduler/main``
  ///     unless a test overrides it).
  /// - Returns: A new driver for this observable.
  public func asDriver(
    policy: DeliveryPolicy = .everyValue,
    scheduler: MainScheduler = .current
  ) -> Driver<Value> {
    Driver(policy: policy, scheduler: scheduler) { [self] receive in
      observe(options: [.initial, .new], in: .delivering) { value, _ in receive(value) }
    }
  }

  /// Returns a ``Driver`` of the successes of a fallible source, delivering `fallback` in place of
  /// each failure.
  ///
  /// A failure does not end anything: the driver keeps delivering later values.
  ///
  /// ```swift
  /// let status = download.result.asDriver(onErrorJustReturn: "Download failed")
  /// status.drive(statusLabel, \.text)
  /// ```
  ///
  /// - Parameters:
  ///   - fallback: The value delivered for a failure.
  ///   - policy: Every value in order (the default), or the latest per main-queue turn.
  ///   - scheduler: The main queue, or a test stand-in.
  /// - Returns: A new driver of successes.
  public func asDriver<Success, Failure: Error>(
    onErrorJustReturn fallback: Success,
    policy: DeliveryPolicy = .everyValue,
    scheduler: MainScheduler = .current
  ) -> Driver<Success> where Value == Result<Success, Failure> {
    asDriver(policy: policy, scheduler: scheduler, recovering: { _ in fallback })
  }

  /// Returns a ``Driver`` of the successes of a fallible source, turning each failure into a value
  /// with `recover`.
  ///
  /// `recover` runs once per failure, on the thread that set it, however many subscribers the
  /// driver has.
  ///
  /// ```swift
  /// let status = download.result.asDriver { error in "Failed: \(error)" }
  /// ```
  ///
  /// - Parameters:
  ///   - policy: Every value in order (the default), or the latest per main-queue turn.
  ///   - scheduler: The main queue, or a test stand-in.
  ///   - recover: Turns a failure into the value to deliver, on the thread that set it (hence
  ///     `@Sendable`).
  /// - Returns: A new driver of successes.
  public func asDriver<Success, Failure: Error>(
    policy: DeliveryPolicy = .everyValue,
    scheduler: MainScheduler = .current,
    onErrorRecover recover: @escaping @Sendable (Failure) -> Success
  ) -> Driver<Success> where Value == Result<Success, Failure> {
    asDriver(policy: policy, scheduler: scheduler, recovering: recover)
  }

  /// ``asDriver(policy:scheduler:onErrorRecover:)`` with a closure the library made.
  private func asDriver<Success, Failure: Error>(
    policy: DeliveryPolicy, scheduler: MainScheduler,
    recovering recover: @escaping (Failure) -> Success
  ) -> Driver<Success> where Value == Result<Success, Failure> {
    Driver(policy: policy, scheduler: scheduler) { [self] receive in
      observe(options: [.initial, .new], in: .delivering) { result, _ in
        switch result {
        case .success(let value): receive(value)
        case .failure(let error): receive(recover(error))
        }
      }
    }
  }
}
