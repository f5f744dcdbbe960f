import Dispatch
import Foundation
import PropertyObservation
import TestSupport

/// A value that is not `Sendable`, to check that iterating values of such a type compiles and
/// works on the main actor.
final class NonSendableBox {
  var number: Int

  init(_ number: Int) {
    self.number = number
  }
}

/// A value whose deinit sets the observable it was stored in to `nil`: user code that re-enters
/// the library from a release.
final class SelfSettingItem: Sendable {
  let number: Int
  private let observable: WeakObservable

  init(_ number: Int, settingNilOn observable: Observable<SelfSettingItem?>) {
    self.number = number
    self.observable = WeakObservable(observable)
  }

  deinit {
    observable.reference?.value = nil
  }

  /// An observable and an iterator of its values made before it was set to items 1, 2 and 3 in
  /// turn.
  static func bufferedInIterator(
    _ policy: ObservableValues<SelfSettingItem?>.BufferingPolicy
  ) -> (Observable<SelfSettingItem?>, ObservableValues<SelfSettingItem?>.Iterator) {
    let observable = Observable<SelfSettingItem?>(nil)
    let iterator = observable.values(bufferingPolicy: policy).makeAsyncIterator()
    for number in 1...3 { observable.value = SelfSettingItem(number, settingNilOn: observable) }
    return (observable, iterator)
  }
}

/// A weak reference to the observable a ``SelfSettingItem`` sets.
private final class WeakObservable: @unchecked Sendable {
  // Written once, in `init`.
  weak var reference: Observable<SelfSettingItem?>?

  init(_ reference: Observable<SelfSettingItem?>) {
    self.reference = reference
  }
}

/// Runs `body` in a task of its own, on a thread of its own, and returns its result, or `nil`
/// if it has not finished within `seconds`. A deadlock fails the test instead of hanging the
/// run: the stuck thread is left behind, and the pool's threads stay free. No thread waits
/// meanwhile.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func finishesWithin<Result: Sendable>(
  seconds: Double, _ body: @escaping @Sendable () async -> Result
) async -> Result? {
  let outcome = FirstOutcome<Result>()
  return await withCheckedContinuation { continuation in
    outcome.set(continuation)
    Task.detached(executorPreference: DedicatedThreadExecutor()) {
      outcome.resume(with: await body())
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { outcome.resume(with: nil) }
  }
}

/// Resumes a continuation with whichever outcome comes first.
private final class FirstOutcome<Result: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var continuation: CheckedContinuation<Result?, Never>?

  func set(_ continuation: CheckedContinuation<Result?, Never>) {
    lock.withLock { self.continuation = continuation }
  }

  func resume(with result: Result?) {
    let continuation = lock.withLock {
      defer { self.continuation = nil }
      return self.continuation
    }
    continuation?.resume(returning: result)
  }
}
