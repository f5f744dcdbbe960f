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

  @Test func aDerivedValuesOnlyTokenCancelledInsideItsOldGetsNoNew() {
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

  @Test func aDerivedValuesOnlyOwnerRemovedInsideItsOldGetsNoNew() {
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

  @Test func aPlainObservablesOnlyObserverRemovedInsideItsOldGetsNoNew() {
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
    runInBackground(on: DispatchQueue(label: "producer")) {
      for value in 1...60 { source.value = value }
    }.waitUntilFinished("the producer")
    source.value = -1
    #expect(view.seen == Array(1...60) + [-1])
    withExtendedLifetime(token) {}
  }
}
