import Dispatch
import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// Registration churn from one thread while another sets (issue 33): cancelled registrations
/// must not pile up in the queue of pending work, or each later cancel scans a longer queue under
/// the lock and the setter collapses.
@Suite("Registration churn beside a setter")
struct RegistrationChurnTests {
  /// Sets `source` `count` times on one thread while another registers with `.initial` on
  /// `churned` and cancels, in a loop, until the sets are done. Returns the largest pending queue
  /// `churned` held, sampled by the churning thread, and how many pairs it made.
  private func churn(
    setting source: Observable<Int>,
    count: Int,
    registeringOn churned: ReadOnlyObservable<Int>
  ) async -> (largestQueue: Int, pairs: Int, finished: Bool) {
    let done = RecordingLog<Bool>()
    let largest = RecordingLog<Int>()
    let churner = runInBackground {
      var pairs = 0
      var queue = 0
      while done.events.isEmpty {
        let token = churned.observe(options: [.initial, .new]) { _, _ in }
        token.cancel()
        pairs += 1
        if pairs % 64 == 0 { queue = max(queue, churned.pendingCapacity) }
      }
      largest.append(queue)
      largest.append(pairs)
    }
    let setter = runInBackground {
      for value in 1...count { source.value = value }
      done.append(true)
    }
    let finished = await setter.finished("the setter", timeout: 60)
    if !finished { done.append(true) }
    await churner.finished("the churning thread", timeout: 60)
    let results = largest.events
    return (results.first ?? .max, results.last ?? 0, finished)
  }

  @Test func churnOnADerivedValueInsideADiamondPublishesOnlyPairsThatExisted() async {
    // While the churning thread catches a registration of `tens` up, it holds `tens`'s role;
    // the setter's change of `tens` waits for its turn and is delivered in the setter's own
    // propagation, so the pair never shows a new `source` with an old `tens` (issue 27,
    // item 1).
    let source = Observable(0)
    let tens = source.map { $0 * 10 }
    let pairs = source.combineLatest(tens)
    let last = RecordingLog<Int>()
    let glitches = RecordingLog<(Int, Int)>()
    let token = pairs.observe { pair, _ in
      last.append(pair.1)
      if pair.1 != pair.0 * 10 { glitches.append(pair) }
    }
    let result = await churn(setting: source, count: 5_000, registeringOn: tens)
    #expect(result.finished)
    #expect(result.pairs > 0)
    // The delivery queue may still be delivering the last changes of `tens`.
    let deadline = DispatchTime.now() + testTimeout
    while last.events.last != 50_000 && DispatchTime.now() < deadline {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(pairs.value == (5_000, 50_000))
    #expect(last.events.last == 50_000)
    #expect(glitches.events.isEmpty, "\(glitches.events.count) pairs that never existed")
    withExtendedLifetime(token) {}
  }

  @Test func churnOnAPlainObservableKeepsThePendingQueueSmall() async {
    let source = Observable(0)
    let seen = RecordingLog<Int>()
    let token = source.observe { value, _ in seen.append(value) }
    let result = await churn(setting: source, count: 5_000, registeringOn: source)
    #expect(result.finished)
    // A registration cancelled before anything is queued behind it leaves the queue at once, so
    // churn from one thread cannot grow the queue another thread drains.
    #expect(result.largestQueue <= 64, "the queue held \(result.largestQueue) slots")
    #expect(seen.events == Array(1...5_000))
    withExtendedLifetime(token) {}
  }
}
