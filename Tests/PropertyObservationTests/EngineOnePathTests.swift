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
