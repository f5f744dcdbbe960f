import Dispatch
import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// The contract breaks of issue 27 that live in the engine's side paths, each pinned by the
/// smallest program that showed it.
@Suite("Engine: one delivery path")
struct EngineOnePathTests {
  // 2. A derived value's only observer, removed inside its `.old`, must not get `.new`.

  @MainActor @Test func aDerivedValuesOnlyTokenCancelledInsideItsOldGetsNoNew() {
    let source = Observable(0)
    let derived = source.map { $0 }
    var log: [String] = []
    var token: ObservationToken?
    token = derived.observe(options: [.old, .new]) { value, option in
      log.append("\(option == .old ? "old" : "new") \(value)")
      if option == .old { token?.cancel() }
    }
    source.value = 1
    #expect(log == ["old 0"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aDerivedValuesOnlyOwnerRemovedInsideItsOldGetsNoNew() {
    let source = Observable(0)
    let derived = source.map { $0 }
    let owner = Owner()
    var log: [String] = []
    derived.addObserver(owner, options: [.old, .new]) { [unowned owner] value, option in
      log.append("\(option == .old ? "old" : "new") \(value)")
      if option == .old { derived.removeObserver(owner) }
    }
    source.value = 1
    #expect(log == ["old 0"])
  }

  @MainActor @Test func aPlainObservablesOnlyObserverRemovedInsideItsOldGetsNoNew() {
    // The control: the same program on a root observable.
    let source = Observable(0)
    var log: [String] = []
    var token: ObservationToken?
    token = source.observe(options: [.old, .new]) { value, option in
      log.append("\(option == .old ? "old" : "new") \(value)")
      if option == .old { token?.cancel() }
    }
    source.value = 1
    #expect(log == ["old 0"])
    withExtendedLifetime(token) {}
  }
}

/// Main-actor state for the main-queue cases of issue 27.
@MainActor private final class SlowView {
  var seen: [Int] = []

  func show(_ value: Int) {
    // About a millisecond of view work per call, so 60 calls outlast a frame budget.
    let until = DispatchTime.now().uptimeNanoseconds + 1_000_000
    while DispatchTime.now().uptimeNanoseconds < until {}
    seen.append(value)
  }
}

@Suite("Engine: one delivery path, on the main actor")
@MainActor
struct EngineOnePathMainActorTests {
  // 5. A main-thread set is delivered to main-actor callbacks before it returns, after every
  // earlier background change, however long the backlog takes.

  @Test func aMainThreadSetReturnsAfterMainActorCallbacksSawTheWholeBacklog() {
    let source = Observable(0)
    let view = SlowView()
    let token = source.observe { value, _ in view.show(value) }
    // The main actor is busy in this test, so every background change waits for it.
    runInBackground {
      for value in 1...60 { source.value = value }
    }.waitUntilFinished("the producer")
    source.value = -1
    #expect(view.seen == Array(1...60) + [-1])
    withExtendedLifetime(token) {}
  }
}

@Suite("Engine: no wait inside a callback")
struct EngineNoWaitInsideACallbackTests {
  // 8. Past 1 024 queued changes, a setter that a blocked callback waits for must not wait
  // forever.

  @Test func aCallbackThatWaitsForAnotherThreadsSetOfTheSameObservableReturnsPastTheLimit() async {
    await onItsOwnThread {
      let source = Observable(0)
      let otherSetReturned = RecordingLog<Bool>()
      let token = source.observe { value, _ in
        guard value == 1 else { return }
        // 1 100 re-entrant changes queued behind this round: past the queued-change limit.
        for next in 2...1_101 { source.value = next }
        let other = runInBackground {
          source.value = -1
        }
        otherSetReturned.append(other.waitUntilFinished("the other setter", timeout: 5))
      }
      let setter = runInBackground { source.value = 1 }
      #expect(setter.waitUntilFinished("the first setter", timeout: 20))
      #expect(otherSetReturned.events == [true])
      #expect(source.value == -1 || source.value == 1_101)
      withExtendedLifetime(token) {}
    }
  }

  // 9. A transaction inside a callback whose set meets another thread's blocked round does not
  // wait forever: once that round makes no progress for the turn timeout, its set is held back
  // and queued behind the round, and the transaction returns.

  @Test func aTransactionInsideACallbackReturnsPastABlockedRound() async {
    await onItsOwnThread {
      let held = Observable(0)
      let watched = Observable(0)
      let gate = Gate("the other thread's round")
      let heldToken = held.observe { value, _ in if value == 1 { gate.block() } }
      let elapsed = RecordingLog<UInt64>()
      let watchedToken = watched.observe { value, _ in
        guard value == 1 else { return }
        let start = DispatchTime.now().uptimeNanoseconds
        for next in 2...4 { withObservationTransaction { held.value = next } }
        elapsed.append(DispatchTime.now().uptimeNanoseconds - start)
      }
      gate.runOnAnotherThread {
        held.value = 1
      } whileBlocked: {
        watched.value = 1
      }
      // Three waits of one turn timeout each (100 ms; 1 s under ThreadSanitizer in CI), not a
      // deadlock.
      #expect((elapsed.events.first ?? .max) < 20_000_000_000)
      // The held-back sets ran after the blocked round, in order.
      #expect(held.value == 4)
      withExtendedLifetime((heldToken, watchedToken)) {}
    }
  }
}

/// An actor with two registrations on one observable, for the order of their calls.
private actor TwoRegistrations {
  private(set) var log: [String] = []
  private var tokens: [ObservationToken] = []

  func register(on source: Observable<Int>) {
    tokens.append(source.observe { value, _ in self.log.append("A\(value)") })
    tokens.append(source.observe { value, _ in self.log.append("B\(value)") })
  }

  /// Sets `values` while the actor is busy running this method, so every call waits for it.
  func set(_ values: ClosedRange<Int>, on source: Observable<Int>) {
    for value in values { source.value = value }
  }
}

@Suite("Engine: actor isolation")
struct EngineActorLaneTests {
  // 6. Calls to one actor arrive round by round, in registration order within a round, as
  // main-actor calls do.

  @Test func registrationsFromOneActorAreCalledRoundByRound() async {
    let source = Observable(0)
    let recorder = TwoRegistrations()
    await recorder.register(on: source)
    await recorder.set(1...3, on: source)
    let deadline = DispatchTime.now() + testTimeout
    while await recorder.log.count < 6 && DispatchTime.now() < deadline {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(await recorder.log == ["A1", "B1", "A2", "B2", "A3", "B3"])
  }
}

/// Whether two callbacks of one observable ever run at the same time: rounds never interleave,
/// and the calls of one round are made one after another, so they never should.
private final class OverlapDetector: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var isInCallback = false
  private var overlaps = 0
  private var calls = 0

  func call(_ body: () -> Void) {
    lock.lock()
    if isInCallback { overlaps += 1 }
    isInCallback = true
    calls += 1
    lock.unlock()
    body()
    lock.lock()
    isInCallback = false
    lock.unlock()
  }

  var counts: (overlaps: Int, calls: Int) {
    lock.lock()
    defer { lock.unlock() }
    return (overlaps, calls)
  }
}

@Suite("Engine: catch-up never overlaps a round")
struct EngineCatchUpOverlapTests {
  // 4. A registration with `.initial` made from other threads while rounds run: its calls
  // never overlap another callback of the observable.

  @Test func gatedRegistrationsAreCaughtUpBetweenRoundsNeverDuringOne() async {
    // With the other tests that stress the library from threads of their own, one per core at
    // a time. Its callbacks widen the race window by spinning for a fixed time, not with
    // `sched_yield`, whose cost grows with the number of runnable threads: 50 yields per call
    // took minutes on a busy machine.
    await onItsOwnThread {
      let source = Observable(0)
      let detector = OverlapDetector()
      let first = source.observe(isolation: nil) { @Sendable _, _ in
        detector.call { spin(microseconds: 20) }
      }
      let registered = RecordingLog<Bool>()
      // Queues of their own: each always gets a thread, so the four bodies really overlap.
      let registrars = (0..<2).map { index in
        runInBackground {
          for _ in 0..<400 {
            let token = source.observe(options: [.initial, .old, .new], isolation: nil) {
              @Sendable _, option in
              guard option != .initial else { return }
              detector.call { spin(microseconds: 1) }
            }
            registered.append(true)
            sched_yield()
            token.cancel()
          }
        }
      }
      let setters = (0..<2).map { index in
        runInBackground {
          for value in 1...2_000 { source.value = value * 2 + index }
        }
      }
      for work in registrars + setters { await work.finished("a setter or a registrar") }
      let (overlaps, calls) = detector.counts
      #expect(calls > 4_000, "no churned registration was called: the threads did not overlap")
      #expect(overlaps == 0, "\(overlaps) of \(calls) callbacks overlapped another")
      withExtendedLifetime(first) {}
    }
  }
}
