import Dispatch

/// The tests' own main-queue check, independent of the library's: a queue-specific value on
/// `DispatchQueue.main` is visible exactly while the main queue runs work.
enum TestMainQueue {
  private static let key: DispatchSpecificKey<Int> = {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 42)
    return key
  }()

  static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 42 }
}

/// Stands in for a view: a label whose text a driver or binder sets.
@MainActor final class DriverTestLabel {
  var text: String?
  var count = 0
}

/// An event recorded on delivery: the value and whether it arrived on the main queue.
struct Delivery<Value: Equatable & Sendable>: Equatable, Sendable {
  var value: Value
  var onMainQueue: Bool
}
