import Dispatch
import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// Runs `body` on another thread and reports whether it finished within `seconds`; a deadlock
/// fails the test instead of hanging the run (the stuck thread is left behind). The deadline is
/// the tests' one (`testTimeout`), which CI raises under ThreadSanitizer, where a main-queue job
/// can wait behind other tests for longer than 10 s.
private func finishes(within seconds: Double = testTimeout, _ body: @escaping @Sendable () -> Void)
  -> Bool
{
  let done = DispatchSemaphore(value: 0)
  Thread.detachNewThread {
    body()
    done.signal()
  }
  return done.wait(timeout: .now() + seconds) == .success
}

private func waitOrFail(_ semaphore: DispatchSemaphore, _ what: Comment) {
  #expect(semaphore.wait(timeout: .now() + testTimeout) == .success, what)
}

/// An object the size of an `ObservationToken`, so that glibc hands a freed one's address to
/// the next token.
private final class TokenSizedOwner: @unchecked Sendable {
  var padding: (Int, Int) = (0, 0)
}

private final class Label: @unchecked Sendable {
  var text = ""
}

/// The defects of issue 18, each pinned by the smallest program that showed it.
@Suite("Engine regressions")
struct EngineRegressionTests {
  // 1. Releasing a closure that owns another registration of the same observable.

  @Test func cancellingATokenWhoseClosureOwnsAnotherTokenOfTheSameObservableReturns() {
    let finished = finishes {
      let source = Observable(0)
      let outer: ObservationToken
      do {
        let inner = source.observe { _, _ in }
        outer = source.observe { _, _ in withExtendedLifetime(inner) {} }
      }
      outer.cancel()
      source.value = 1
    }
    #expect(finished, "cancel() deadlocked releasing a closure that owns a token")
  }

  @Test func removingAnOwnerWhoseClosureOwnsAnotherTokenOfTheSameObservableReturns() {
    let finished = finishes {
      let source = Observable(0)
      let owner = Owner()
      do {
        let inner = source.observe { _, _ in }
        source.addObserver(owner) { _, _ in withExtendedLifetime(inner) {} }
      }
      source.removeObserver(owner)
      source.value = 1
    }
    #expect(finished, "removeObserver deadlocked releasing a closure that owns a token")
  }

  @Test func pruningADeadOwnerWhoseClosureOwnsAnotherTokenOfTheSameObservableReturns() {
    let finished = finishes {
      let source = Observable(0)
      do {
        let owner = Owner()
        let inner = source.observe { _, _ in }
        source.addObserver(owner) { _, _ in withExtendedLifetime(inner) {} }
      }
      source.value = 1  // prunes the dead owner's entry, releasing `inner`
      source.value = 2
    }
    #expect(finished, "pruning a dead owner deadlocked")
  }

  @Test func cancellingADriveWhoseClosureOwnsAnotherDriveOfTheSameDriverReturns() async {
    await onItsOwnThread {
      let done = DispatchSemaphore(value: 0)
      // `drive` callbacks are main-actor closures: run the program on the main queue.
      DispatchQueue.main.async {
        let source = Observable(0)
        let driver = source.asDriver(scheduler: .immediate)
        let outer: ObservationToken
        do {
          let inner = driver.drive { _ in }
          outer = driver.drive { _ in withExtendedLifetime(inner) {} }
        }
        outer.cancel()
        source.value = 1
        done.signal()
      }
      #expect(done.wait(timeout: .now() + testTimeout) == .success, "the Driver deadlocked")
    }
  }

  // 2. A cancel must end its own registration, never one whose owner had the same address.

  @Test func cancellingATokenNeverEndsADeadOwnersRegistrationAtTheSameAddress() {
    let cancelledCalls = LockedValue(0)
    var reusedAddresses = 0
    for _ in 0..<200 {
      let source = Observable(0)
      var ownerAddress: ObjectIdentifier?
      do {
        let owner = TokenSizedOwner()
        ownerAddress = ObjectIdentifier(owner)
        source.addObserver(owner) { _, _ in }
      }
      let token = source.observe { _, _ in cancelledCalls.withLock { $0 += 1 } }
      if ObjectIdentifier(token) == ownerAddress { reusedAddresses += 1 }
      token.cancel()
      source.value = 1
      withExtendedLifetime(token) {}
    }
    #expect(cancelledCalls.value == 0, "a cancelled token was called (\(reusedAddresses) reused)")
  }

  // 3. Rebinding a target inside a round of its source.

  @Test func rebindingATargetInsideACallbackOfItsSourceKeepsTheNewBindingAlive() {
    let source = Observable("a")
    let label = Label()
    source.bind(to: label, \.text)
    let trigger = Observable(0)
    let token = trigger.observe { _, _ in
      source.removeObserver(label)
      source.bind(to: label, \.text)
    }
    let reconfigure = source.observe { value, _ in
      guard value == "cell" else { return }
      source.removeObserver(label)
      source.bind(to: label, \.text)
    }
    trigger.value = 1
    source.value = "b"
    #expect(label.text == "b")
    source.value = "cell"
    source.value = "c"
    #expect(label.text == "c", "a binding made inside its source's round never saw later changes")
    withExtendedLifetime((token, reconfigure)) {}
  }

  @Test func unbindingAndBindingAgainInsideACallbackOfItsSourceKeepsTheNewBindingAlive() {
    let source = Observable(0)
    final class Target: @unchecked Sendable { var value = 0 }
    let target = Target()
    let binding = LockedValue(source.bind(to: target, \.value))
    let token = source.observe { value, _ in
      guard value == 1 else { return }
      binding.value.unbind()
      binding.value = source.bind(to: target, \.value)
    }
    source.value = 1
    source.value = 2
    #expect(target.value == 2)
    withExtendedLifetime(token) {}
  }

  // 4. A re-entrant set is delivered by the thread that made it, before its outermost set returns.

  @Test func aReentrantSetIsDeliveredBeforeTheOutermostSetReturnsWhileAnotherThreadRegisters() async
  {
    await onItsOwnThread {
      let source = Observable(0)
      let registering = DispatchSemaphore(value: 0)
      let releaseInitial = DispatchSemaphore(value: 0)
      let seen = LockedBox<[Int]>([])
      let setter = Owner()
      source.addObserver(setter) { value, _ in
        seen.mutate { $0.append(value) }
        guard value == 1 else { return }
        // Another thread registers with `.initial` now, and stays inside that callback.
        DispatchQueue.global().async {
          let registrant = Owner()
          source.addObserver(registrant, options: [.initial, .new]) { _, option in
            if option == .initial {
              registering.signal()
              _ = releaseInitial.wait(timeout: .now() + testTimeout)
            }
          }
          withExtendedLifetime(registrant) {}
        }
        _ = registering.wait(timeout: .now() + testTimeout)
        source.value = 2  // re-entrant: queued behind the registration
      }
      let finished = finishes { source.value = 1 }
      #expect(finished)
      #expect(seen.value == [1, 2], "the re-entrant set escaped its outermost set")
      releaseInitial.signal()
    }
  }

  // 5. A removal from another thread applies at the next round boundary, not after the queue.

  @Test func aTokenCancelledFromAnotherThreadIsNotCalledForChangesQueuedBehindTheCurrentRound()
    async
  {
    await onItsOwnThread {
      let source = Observable(0)
      let inRound = DispatchSemaphore(value: 0)
      let proceed = DispatchSemaphore(value: 0)
      let blocker = source.observe { value, _ in
        guard value == 1 else { return }
        inRound.signal()
        _ = proceed.wait(timeout: .now() + testTimeout)
      }
      let cancelled = LockedBox<[Int]>([])
      let token = source.observe { value, _ in cancelled.mutate { $0.append(value) } }
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        source.value = 1
        done.signal()
      }
      waitOrFail(inRound, "the first round never started")
      // Queued behind round 1. (Each setter waits a moment for its turn, then leaves its change to
      // the blocked deliverer.)
      for value in 2...4 { source.value = value }
      token.cancel()
      proceed.signal()
      waitOrFail(done, "the delivering thread never finished")
      #expect(cancelled.value.allSatisfy { $0 == 1 }, "called after cancel(): \(cancelled.value)")
      withExtendedLifetime(blocker) {}
    }
  }

  // 6. The pending queue releases its storage once it is empty.

  @Test func thePendingQueueReleasesItsStorageAfterABurstHasBeenDelivered() {
    let source = Observable(0)
    let delivered = LockedValue(0)
    // A callback that sets 20 000 times queues 20 000 rounds behind the current one.
    let burst = source.observe { value, _ in
      delivered.withLock { $0 += 1 }
      guard value == 1 else { return }
      for next in 2...20_001 { source.value = next }
      #expect(source.pendingCapacity >= 20_000)
    }
    source.value = 1
    #expect(delivered.value == 20_001)
    #expect(source.pendingCapacity <= 64, "idle observable keeps \(source.pendingCapacity) slots")
    withExtendedLifetime(burst) {}
  }

  // 7. Rebinding leaves one registration per (target, key path), on the current source only.

  @Test func rebindingCellsAcrossManySourcesLeavesOneRegistrationPerCell() {
    let sources = (0..<50).map { Observable("source \($0)") }
    let cells = (0..<20).map { _ in Label() }
    var generator = SplitMix64(seed: 7)
    var current: [Int] = Array(repeating: 0, count: cells.count)
    for _ in 0..<200 {
      for (index, cell) in cells.enumerated() {
        let pick = Int(generator.next() % UInt64(sources.count))
        current[index] = pick
        sources[pick].bind(to: cell, \.text)
      }
    }
    let registrations = sources.reduce(0) { $0 + $1.observerCount }
    #expect(registrations == cells.count)
    for (index, cell) in cells.enumerated() {
      #expect(cell.text == "source \(current[index])")
    }
  }
}

/// A value guarded by a lock, shared between a test and the threads it starts.
private final class LockedBox<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: Value
  init(_ value: Value) { storage = value }
  var value: Value { lock.withLock { storage } }
  func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&storage) } }
}
