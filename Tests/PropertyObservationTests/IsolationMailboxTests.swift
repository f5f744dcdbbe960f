import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

/// An actor that observes two observables, for the order of their calls.
private actor TwoObservablesWatcher {
  private(set) var log: [String] = []
  private var tokens: [ObservationToken] = []

  func register(on a: Observable<Int>, _ b: Observable<Int>) {
    tokens.append(a.observe { value, _ in self.log.append("a\(value)") })
    tokens.append(b.observe { value, _ in self.log.append("b\(value)") })
  }

  /// Sets `a`, `b`, `a` while the actor is busy running this method, so every call waits for it.
  func setInTurn(_ a: Observable<Int>, _ b: Observable<Int>) {
    a.value = 1
    b.value = 1
    a.value = 2
  }
}

/// What main-actor observers append to, in the order they are called.
@MainActor private final class CallLog {
  var entries: [String] = []
}

/// Two observables with a main-actor observer each, registered under a manual scheduler that
/// stands for the main queue; each observer logs its observable's name and value (`a1`).
@MainActor private struct TwoObservedOnManual {
  let a = Observable(0)
  let b = Observable(0)
  let manual = ManualScheduler()
  let log = CallLog()
  private let tokens: [ObservationToken]

  init() {
    let (a, b, log) = (a, b, log)
    tokens = MainScheduler.withScheduler(.manual(manual)) {
      [
        a.observe { value, _ in log.entries.append("a\(value)") },
        b.observe { value, _ in log.entries.append("b\(value)") },
      ]
    }
  }
}

/// Issue 40: callbacks that run in an isolation of their own (the main actor, another actor)
/// run through one mailbox per isolation, in the order of the propagations that made their
/// calls, not observable by observable.
@Suite("One mailbox per isolation")
struct IsolationMailboxTests {
  @MainActor
  @Test func mainActorCallsOfDifferentObservablesRunInTheOrderTheirSetsWereMade() {
    let observed = TwoObservedOnManual()
    let (a, b) = (observed.a, observed.b)
    runInBackground {
      a.value = 1
      b.value = 1
      a.value = 2
      b.value = 2
      a.value = 3
    }.waitUntilFinished("the setter")
    #expect(observed.log.entries.isEmpty)
    // One mailbox: one turn for both observables' calls.
    #expect(observed.manual.pendingCount == 1)
    observed.manual.runAll()
    // In the order of the sets, not observable by observable (a1 a2 a3 b1 b2).
    #expect(observed.log.entries == ["a1", "b1", "a2", "b2", "a3"])
  }

  @MainActor
  @Test func aMainQueueSetRunsTheCallsOfOtherObservablesQueuedBeforeItFirst() {
    let observed = TwoObservedOnManual()
    let a = observed.a
    runInBackground { a.value = 1 }.waitUntilFinished("the setter")
    #expect(observed.log.entries.isEmpty)
    observed.manual.runOnMain {
      observed.b.value = 1
      // Delivered before the set returns, after the call another thread queued before it.
      #expect(observed.log.entries == ["a1", "b1"])
    }
    observed.manual.runAll()
    #expect(observed.log.entries == ["a1", "b1"])
  }

  @MainActor
  @Test func aSetInsideAWaitingCallRunsItsCallsAfterThoseQueuedBeforeIt() {
    // `a`'s call runs from the mailbox and sets `c`: a new propagation, made after `b = 1`
    // was queued, so `c`'s call runs after `b`'s, once `a`'s callback has returned.
    let a = Observable(0)
    let b = Observable(0)
    let c = Observable(0)
    let manual = ManualScheduler()
    var log: [String] = []
    let tokens = MainScheduler.withScheduler(.manual(manual)) {
      [
        a.observe { value, _ in
          log.append("a\(value)")
          c.value = value
          log.append("a\(value) returns")
        },
        b.observe { value, _ in log.append("b\(value)") },
        c.observe { value, _ in log.append("c\(value)") },
      ]
    }
    runInBackground {
      a.value = 1
      b.value = 1
    }.waitUntilFinished("the setter")
    manual.runAll()
    #expect(log == ["a1", "a1 returns", "b1", "c1"])
    withExtendedLifetime(tokens) {}
  }

  @MainActor
  @Test(arguments: [false, true])
  func aTurnOutOfFrameBudgetLeavesTheRestInOrderForTheNextTurn(bInTheMiddle: Bool) {
    // `a`'s first call outlasts the frame budget (8 ms), so the turn stops after it, inside
    // `a`'s run of calls or at the end of it; the next turn delivers the rest in order.
    let a = Observable(0)
    let b = Observable(0)
    let manual = ManualScheduler()
    let log = CallLog()
    let tokens = MainScheduler.withScheduler(.manual(manual)) {
      [
        a.observe { value, _ in
          log.entries.append("a\(value)")
          if value == 1 { usleep(12_000) }
        },
        b.observe { value, _ in log.entries.append("b\(value)") },
      ]
    }
    runInBackground {
      a.value = 1
      if bInTheMiddle { b.value = 1 }
      a.value = 2
      if !bInTheMiddle { b.value = 1 }
    }.waitUntilFinished("the setter")
    #expect(manual.runNext())
    #expect(log.entries == ["a1"], "the turn spent its budget on a1")
    #expect(manual.pendingCount == 1, "a turn for the rest")
    manual.runAll()
    #expect(log.entries == (bInTheMiddle ? ["a1", "b1", "a2"] : ["a1", "a2", "b1"]))
    withExtendedLifetime(tokens) {}
  }

  @MainActor
  @Test func aRoundNestedInAMainQueueRoundStillCallsItsMainActorObserversInline() {
    // One propagation on the main queue: `b`'s round runs inside `a`'s callback, and its
    // main-actor observer is called there, before the callback goes on.
    let a = Observable(0)
    let b = Observable(0)
    let manual = ManualScheduler()
    var log: [String] = []
    let tokens = MainScheduler.withScheduler(.manual(manual)) {
      [
        a.observe { value, _ in
          withObservationTransaction { b.value = value }
          log.append("a\(value) after b")
        },
        b.observe { value, _ in log.append("b\(value)") },
      ]
    }
    manual.runOnMain { a.value = 1 }
    #expect(log == ["b1", "a1 after b"])
    #expect(manual.pendingCount == 0)
    withExtendedLifetime(tokens) {}
  }

  @MainActor
  @Test func theRealMainQueueRunsTwoObservablesCallsInTheOrderOfTheirSets() async {
    let a = Observable(0)
    let b = Observable(0)
    var log: [String] = []
    let tokens = [
      a.observe { value, _ in log.append("a\(value)") },
      b.observe { value, _ in log.append("b\(value)") },
    ]
    let setter = runInBackground {
      for step in 1...200 {
        a.value = step
        b.value = step
      }
    }
    // Suspending lets the main queue run the turns.
    let deadline = DispatchTime.now() + testTimeout
    while log.count < 400 && DispatchTime.now() < deadline {
      await Task.yield()
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(setter.waitUntilFinished("the background setter"))
    #expect(log == (1...200).flatMap { ["a\($0)", "b\($0)"] })
    withExtendedLifetime(tokens) {}
  }

  @Test func anActorGetsTheCallsOfTwoObservablesInTheOrderTheirSetsWereMade() async {
    let a = Observable(0)
    let b = Observable(0)
    let watcher = TwoObservablesWatcher()
    await watcher.register(on: a, b)
    await watcher.setInTurn(a, b)
    let deadline = DispatchTime.now() + testTimeout
    while await watcher.log.count < 3 && DispatchTime.now() < deadline {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    // In the order of the sets, not observable by observable (a1 a2 b1).
    #expect(await watcher.log == ["a1", "b1", "a2"])
  }
}
