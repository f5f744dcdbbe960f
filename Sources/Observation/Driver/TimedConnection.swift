/// One connection of a timed driver (``Driver/debounce(for:)``, ``Driver/throttle(for:latest:)``)
/// to its upstream driver: made when the timed driver's first subscriber arrives, ended when its
/// last one goes.
///
/// It drives the upstream driver, feeds each value to its ``TimingState``, and performs the
/// actions that come back: timers on the scheduler, deliveries to the timed driver. The upstream
/// callbacks and the timers run on the scheduler's main queue; ending the connection may happen
/// on any thread. The ``ObservationToken`` returned by ``start(driving:)`` owns the connection;
/// the upstream callback and the timers hold it weakly, so a timer still pending after the end
/// keeps nothing alive and does nothing when it runs.
final class TimedConnection<State: TimingState>: RegistrationRemoving {
  typealias Value = State.Value

  private let interval: MainScheduler.Interval
  private let scheduler: MainScheduler
  /// The timed driver's input; called on the main queue only, outside `lock`.
  private let deliver: (Value) -> Void
  private let lock = Lock()
  // Guarded by `lock`.
  /// `nil` once the connection has ended.
  @exclusivity(unchecked) private var state: State?
  @exclusivity(unchecked) private var upstream: ObservationToken?

  init(
    state: State,
    interval: MainScheduler.Interval,
    scheduler: MainScheduler,
    deliver: @escaping (Value) -> Void
  ) {
    self.state = state
    self.interval = interval
    self.scheduler = scheduler
    self.deliver = deliver
  }

  deinit {
    lock.deallocate()
  }

  /// Subscribes to `driver` and returns the token that owns this connection.
  func start(driving driver: Driver<Value>) -> ObservationToken {
    // On the main queue the replay arrives inside `drive`, before the token is stored here;
    // `receive` does not need it.
    let token = driver.drive { [weak self] value in self?.receive(value) }
    lock.withLock { upstream = token }
    return ObservationToken(source: self)
  }

  func removeRegistration(identifiedBy token: AnyObject) {
    lock.lock()
    // Let go of after unlocking: the waiting value, and the upstream subscription.
    let ended = state
    let upstream = self.upstream
    state = nil
    self.upstream = nil
    lock.unlock()
    upstream?.cancel()
    withExtendedLifetime(ended) {}
  }

  private func receive(_ value: Value) {
    guard let action = lock.withLock({ state?.receive(value) }) else { return }
    perform(action)
  }

  private func timerFired(_ generation: UInt64) {
    guard let action = lock.withLock({ state?.timerFired(generation) }) else { return }
    perform(action)
  }

  /// Lock not held: delivering runs subscribers' code, on ``MainScheduler/immediate`` the timer
  /// runs inside `enqueue(after:_:)`, and a discarded value is released here.
  private func perform(_ action: TimingAction<Value>) {
    if let value = action.delivery {
      deliver(value)
    }
    if let generation = action.timer {
      scheduler.enqueue(after: interval) { [weak self] in
        self?.timerFired(generation)
      }
    }
  }
}

// `state` and `upstream` are guarded by `lock`; the other properties are constants, and
// `deliver` is only called on the scheduler's main queue. Values are `Sendable`.
extension TimedConnection: @unchecked Sendable {}
