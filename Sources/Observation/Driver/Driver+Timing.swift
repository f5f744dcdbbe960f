extension Driver where Value: Sendable {
  /// Returns a driver that delivers a value only once this driver has been quiet for `interval`:
  /// of a burst of values, only the last is delivered.
  ///
  /// Each value from this driver waits for `interval`; a newer value arriving in the meantime
  /// takes its place and starts the wait again. So a search field's query reaches the network
  /// once the user pauses typing, not on every keystroke:
  ///
  /// ```swift
  /// // searchField.text is an Observable<String> that the text field updates on every keystroke.
  /// searchField.text.asDriver()
  ///   .debounce(for: .milliseconds(300))
  ///   .drive(with: self) { controller, query in
  ///     let titles = controller.catalog.titles(matching: query)
  ///     controller.resultsLabel.text = titles.joined(separator: ", ")
  ///   }
  /// ```
  ///
  /// Everything the driver contract promises holds for the returned driver: it never fails,
  /// delivers on the main queue, keeps the order of values, and shares one subscription to this
  /// driver among all its subscribers. Specifically:
  ///
  /// - **Start.** The first value waits like any other: a new subscriber of a fresh debounced
  ///   driver receives nothing until this driver has been quiet for `interval` after its current
  ///   value (or after the last of the values that followed it).
  /// - **Late subscribers.** A subscriber that joins later first receives the last value the
  ///   debounced driver delivered, replayed without waiting, then the later ones; one that joins
  ///   before the first delivery waits for it.
  /// - **Lifetime.** The returned driver keeps this driver alive. Its subscription to this
  ///   driver starts with its first subscriber and ends with its last; a value still waiting then
  ///   is dropped, and the timer still pending holds nothing and delivers nothing. A later first
  ///   subscriber starts over from this driver's current value.
  ///
  /// The wait runs on this driver's ``MainScheduler``: `DispatchQueue.main.asyncAfter` on
  /// ``MainScheduler/main``, virtual time on a ``ManualScheduler`` (tests move it with
  /// ``ManualScheduler/advance(by:)``); on ``MainScheduler/immediate`` no time passes, so every
  /// value is delivered at once.
  ///
  /// - Parameter interval: How long this driver must be quiet before its last value is delivered.
  /// - Returns: A new driver of the values that were followed by `interval` of quiet.
  public func debounce(for interval: MainScheduler.Interval) -> Driver<Value> {
    timed(by: DebounceState(), interval: interval)
  }

  /// Returns a driver that delivers at most one value per `interval`: the first value at once,
  /// then, at the end of each interval, the latest (or the first) of the values that arrived
  /// during it.
  ///
  /// A value that arrives when the returned driver has delivered nothing for `interval` is
  /// delivered at once and opens a window of `interval`. The values that arrive during the
  /// window wait for its end: there the driver delivers one of them, the latest or the first
  /// according to `latest`, and that delivery opens the next window. A window that ends with no
  /// value waiting closes, and the next value is again delivered at once.
  ///
  /// ```swift
  /// let progress = download.progress.asDriver().throttle(for: .milliseconds(100), latest: true)
  /// progress.drive(progressView, \.fraction)  // at most ten updates a second
  /// ```
  ///
  /// `latest` has Combine's meaning: `false` delivers, at the end of the window, the *first*
  /// value that arrived during it (RxSwift's `latest: false` would drop those values instead).
  /// Either way no value is delivered twice and the order of values is kept. With `latest:
  /// true` the last value this driver sends is always delivered, one window late at most; with
  /// `false` the throttled driver may settle on an older value than this driver's current one,
  /// so prefer `true` for state that a view shows.
  ///
  /// As for ``debounce(for:)``, the returned driver keeps the driver contract: main queue,
  /// order, one shared subscription to this driver. A subscriber that joins later first
  /// receives the last value the throttled driver delivered. When the last subscriber goes, a
  /// waiting value is dropped and the pending timer delivers nothing; a later first subscriber
  /// starts over, with this driver's current value delivered at once. The windows run on this
  /// driver's ``MainScheduler`` (virtual time on a ``ManualScheduler``; on
  /// ``MainScheduler/immediate`` a window ends as soon as it opens, so every value is delivered).
  ///
  /// - Parameters:
  ///   - interval: The shortest time between two deliveries.
  ///   - latest: Whether the end of a window delivers the latest value that arrived during it
  ///     (`true`) or the first one (`false`).
  /// - Returns: A new driver of at most one value per `interval`.
  public func throttle(for interval: MainScheduler.Interval, latest: Bool) -> Driver<Value> {
    timed(by: ThrottleState(latest: latest), interval: interval)
  }

  /// A driver on this driver's scheduler whose every connection runs a copy of `state`.
  private func timed<State: TimingState>(
    by state: State,
    interval: MainScheduler.Interval
  ) -> Driver<Value> where State.Value == Value {
    let scheduler = self.scheduler
    return Driver(policy: .everyValue, scheduler: scheduler) { [self] deliver in
      TimedConnection(state: state, interval: interval, scheduler: scheduler, deliver: deliver)
        .start(driving: self)
    }
  }
}
