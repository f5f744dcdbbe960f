import Dispatch
import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// Runs `body` on a thread with a 512 KiB stack (the default for a secondary thread on Apple
/// platforms) and reports whether it finished within the deadline.
private func onASmallStack(_ body: @escaping @Sendable () -> Void) async -> Bool {
  let done = RecordingLog<Bool>()
  let thread = Thread {
    body()
    done.append(true)
  }
  thread.stackSize = 512 * 1024
  thread.start()
  return await done.waitForCount(1)
}

/// Propagation through derived values does not grow the stack with the depth of the graph
/// (issue 32, item 3): a chain of one-input operators runs as a loop, not as nested calls.
@Suite("Deep chains")
struct DeepChainTests {
  // The depth is handled by the single-observer shortcut of a derived value, which a build with
  // the fast paths switched off does not take: there, each level runs a full round, nested.
  @Test(.enabled(if: FastPaths.areEnabled))
  func aSetThroughAChainAHundredThousandLevelsDeepCompletesOnA512KiBStack() async {
    let log = RecordingLog<Int>()
    let finished = await onASmallStack {
      let source = Observable(0)
      var chain: ReadOnlyObservable<Int> = source
      for _ in 0..<100_000 { chain = chain.map { $0 + 1 } }
      let token = chain.observe { value, _ in log.append(value) }
      source.value = 1
      source.value = 2
      token.cancel()
      // Releasing the chain must not recurse through it either.
      chain = source
    }
    #expect(finished)
    #expect(log.events == [100_001, 100_002])
  }

  @Test func aDeepChainPublishesBeforeTheObserversRegisteredAfterIt() {
    // Deep chains keep the ordering contract: the whole chain publishes when the source's
    // round reaches it, before the source's later observers.
    let source = Observable(0)
    var chain: ReadOnlyObservable<Int> = source
    let log = RecordingLog<String>()
    for _ in 0..<1_000 { chain = chain.map { $0 + 1 } }
    let end = chain.observe { value, _ in log.append("chain \(value)") }
    let after = source.observe { value, _ in log.append("after \(value)") }
    source.value = 1
    #expect(log.events == ["chain 1001", "after 1"])
    withExtendedLifetime((end, after)) {}
  }

  @Test func aDeepChainWithABranchKeepsTheBranchOrder() {
    // A level with two observers runs a full round: the chain below its first observer
    // publishes before its second observer is called.
    let source = Observable(0)
    var chain: ReadOnlyObservable<Int> = source
    for _ in 0..<500 { chain = chain.map { $0 + 1 } }
    let middle = chain
    let log = RecordingLog<String>()
    var lower: ReadOnlyObservable<Int> = middle
    for _ in 0..<500 { lower = lower.map { $0 + 1 } }
    let end = lower.observe { value, _ in log.append("lower \(value)") }
    let sibling = middle.observe { value, _ in log.append("middle \(value)") }
    source.value = 1
    #expect(log.events == ["lower 1001", "middle 501"])
    withExtendedLifetime((end, sibling)) {}
  }
}
