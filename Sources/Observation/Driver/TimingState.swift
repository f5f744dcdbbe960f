/// The pure state of a timing operator (``Driver/debounce(for:)``,
/// ``Driver/throttle(for:latest:)``): events go in, an action comes out, and a
/// ``TimedConnection`` performs the action once it has released its lock.
///
/// Both events arrive on the scheduler's main queue, one at a time.
protocol TimingState: Sendable {
  associatedtype Value: Sendable

  /// A value from the upstream driver.
  mutating func receive(_ value: Value) -> TimingAction<Value>

  /// The timer started by the action that carried `generation` has run out.
  mutating func timerFired(_ generation: UInt64) -> TimingAction<Value>
}

/// What a ``TimingState`` asks its connection to do.
struct TimingAction<Value: Sendable> {
  /// A value to deliver downstream now.
  var delivery: Value?
  /// A timer to start for one interval; when it runs out, the state receives
  /// `timerFired(generation)` with this number.
  var timer: UInt64?
  /// A value the state let go of, carried out so that it is released after the lock (its
  /// `deinit` may be user code).
  var discarded: Value?

  static var none: TimingAction { TimingAction() }
}

/// Delivers a value once the upstream has been quiet for one interval: each value replaces the
/// waiting one and starts the wait again.
struct DebounceState<Value: Sendable>: TimingState {
  private var waiting: Value?
  /// Identifies the latest timer; an older one that runs out finds a different number.
  private var generation: UInt64 = 0

  mutating func receive(_ value: Value) -> TimingAction<Value> {
    let replaced = waiting
    waiting = value
    generation &+= 1
    return TimingAction(timer: generation, discarded: replaced)
  }

  mutating func timerFired(_ generation: UInt64) -> TimingAction<Value> {
    guard generation == self.generation, let value = waiting else { return .none }
    waiting = nil
    return TimingAction(delivery: value)
  }
}

/// Delivers at most one value per interval: a value that finds no window open is delivered at
/// once and opens one; values during a window wait for its end, where the kept one (the latest,
/// or the first) is delivered and opens the next window. A window that ends with nothing kept
/// closes.
struct ThrottleState<Value: Sendable>: TimingState {
  private let keepsLatest: Bool
  private var isWindowOpen = false
  private var kept: Value?

  init(latest: Bool) {
    keepsLatest = latest
  }

  mutating func receive(_ value: Value) -> TimingAction<Value> {
    guard isWindowOpen else {
      isWindowOpen = true
      return TimingAction(delivery: value, timer: 0)
    }
    guard keepsLatest || kept == nil else { return .none }
    let replaced = kept
    kept = value
    return TimingAction(discarded: replaced)
  }

  mutating func timerFired(_ generation: UInt64) -> TimingAction<Value> {
    // One window at a time, so every timer that runs out is the current one.
    guard let value = kept else {
      isWindowOpen = false
      return .none
    }
    kept = nil
    return TimingAction(delivery: value, timer: 0)
  }
}
