import Dispatch

/// Tells whether the calling code runs on the main queue.
///
/// `Thread.isMainThread` is the wrong question on Linux: under Swift Testing the process parks its
/// main thread in `dispatchMain()` and the main queue is drained by another thread, so work on the
/// main queue (and on the main actor, whose executor is that queue) can run off the main thread.
/// A queue-specific value set on `DispatchQueue.main` is visible exactly while the main queue runs
/// a block, whichever thread drains it, and it needs no Foundation.
enum MainQueue {
  private static let key: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
  }()

  /// Whether the calling code runs on the main queue (in a block it drains, or on the main thread
  /// while it runs the main run loop, as XCTest's `wait(for:timeout:)` does).
  static var isCurrent: Bool {
    DispatchQueue.getSpecific(key: key) != nil
  }
}
