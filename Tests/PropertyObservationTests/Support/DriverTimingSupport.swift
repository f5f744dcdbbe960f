import PropertyObservation
import TestSupport

/// A value and the virtual time, in milliseconds, at which it reached a subscriber.
struct Arrival<Value: Equatable & Sendable>: Equatable, Sendable, CustomStringConvertible {
  var value: Value
  var time: MainScheduler.Interval

  init(_ value: Value, at milliseconds: Int) {
    self.value = value
    self.time = .milliseconds(milliseconds)
  }

  init(_ value: Value, time: MainScheduler.Interval) {
    self.value = value
    self.time = time
  }

  var description: String { "\(value) at \(time)" }
}

extension Driver where Value: Equatable & Sendable {
  /// Subscribes on the manual main queue, so the replay arrives at once, and logs each value with
  /// the virtual time it arrived at.
  func record(on main: ManualScheduler, into log: RecordingLog<Arrival<Value>>) -> ObservationToken
  {
    main.runOnMain {
      drive { log.append(Arrival($0, time: main.elapsedTime)) }
    }
  }
}

extension ManualScheduler {
  /// Sets `value` on "the main queue", at the current virtual time.
  func set<Value>(_ observable: Observable<Value>, to value: Value) {
    runOnMain { observable.value = value }
  }
}
