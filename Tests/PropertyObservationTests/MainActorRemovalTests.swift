import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

/// A view controller's stand-in: main-actor state written by its callbacks.
@MainActor private final class Screen {
  var seen: [Int] = []
  var secondSeen: [Int] = []
  var number = 0
}

/// Runs `body` on another thread while the main thread waits, so the main queue runs nothing
/// meanwhile: main-actor calls queued by `body` are still waiting when this returns.
private func onAnotherThreadWhileMainWaits(_ body: @escaping @Sendable () -> Void) {
  let done = DispatchSemaphore(value: 0)
  DispatchQueue.global().async {
    body()
    done.signal()
  }
  #expect(done.wait(timeout: .now() + 120) == .success, "the work on another thread never ended")
}

/// Gives the main queue turns to run what waits for it. Not a proof that nothing more is on its
/// way: ``settleMainActorCalls(of:)`` is.
@MainActor private func letTheMainQueueRun() async {
  for _ in 0..<20 { await Task.yield() }
}

/// Runs the held-round scenario around `end`: a background thread sets `values` in order, and
/// the round of the last one is held open while `end` runs and the main queue gets its turns.
/// Returns whether the producer finished and the main-actor calls settled (see
/// ``settleMainActorCalls(of:)``): once it returns, every call that was to arrive has arrived.
@MainActor private func holdARoundOpen(
  on source: Observable<Int>,
  setting values: [Int] = [1, 2],
  end: () -> Void = {}
) async -> Bool {
  // The last round is held with plain semaphores and long deadlines: the main actor must stay
  // busy (not yielding) until `end` has run, and a starved main actor on a loaded machine
  // must only slow the test down, not make the held round give up.
  let held = values.last
  let arrived = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  // Nonisolated (made before the registration, with `isolation: nil`): it blocks the setting
  // thread, not the main actor.
  let blocking: @Sendable (Int, ObservableOptions) -> Void = { value, _ in
    guard value == held else { return }
    arrived.signal()
    _ = release.wait(timeout: .now() + 120)
  }
  let slow = source.observe(isolation: nil, blocking)
  let producer = runInBackground {
    for value in values { source.value = value }
  }
  #expect(arrived.wait(timeout: .now() + 120) == .success, "the last round never started")
  end()
  // The earlier calls have been waiting for the main queue all along: give them every chance.
  await letTheMainQueueRun()
  release.signal()
  let finished = await producer.finished("the producer", timeout: 120)
  let isSettled = await settleMainActorCalls(of: source)
  withExtendedLifetime(slow) {}
  return finished && isSettled
}

/// Ending a main-actor registration on the main actor drops the calls already waiting for the
/// main queue, however the registration ends (issue 34).
///
/// Each test holds a background round open: a background thread sets 1 (its main-actor call
/// waits for the main queue), then sets 2, whose round stops in an earlier nonisolated observer.
/// The main actor ends the registration, lets the main queue run, releases the round and lets
/// the main queue run again: no call may arrive after the ending call returned.
@Suite("Ending a main-actor registration on the main actor", .serialized)
@MainActor
struct MainActorRemovalTests {
  @Test func removeObserverDropsTheCallsAlreadyWaiting() async {
    let source = Observable(0)
    let screen = Screen()
    source.addObserver(screen) { [weak screen] value, _ in screen?.seen.append(value) }
    #expect(await holdARoundOpen(on: source) { source.removeObserver(screen) })
    #expect(screen.seen == [])
  }

  @Test func removeObserverDropsTheWaitingCallsOfAnObserveWithOwnerRegistration() async {
    let source = Observable(0)
    let screen = Screen()
    source.observe(with: screen) { screen, value in screen.seen.append(value) }
    #expect(await holdARoundOpen(on: source) { source.removeObserver(screen) })
    #expect(screen.seen == [])
  }

  @Test func unbindDropsTheWritesAlreadyWaiting() async {
    let source = Observable(0)
    let screen = Screen()
    let binding = source.bind(to: screen, \.number)
    screen.number = -1
    #expect(await holdARoundOpen(on: source) { binding.unbind() })
    #expect(screen.number == -1)
  }

  @Test func cancellingATokenDropsTheCallsAlreadyWaiting() async {
    let source = Observable(0)
    let screen = Screen()
    let token = source.observe { [weak screen] value, _ in screen?.seen.append(value) }
    #expect(await holdARoundOpen(on: source) { token.cancel() })
    #expect(screen.seen == [])
  }

  @Test func registeringAgainRightAfterRemovalGetsTheLaterCalls() async {
    let source = Observable(0)
    let screen = Screen()
    let record: @MainActor (Int, ObservableOptions) -> Void = { [weak screen] value, _ in
      screen?.seen.append(value)
    }
    source.addObserver(screen, closure: record)
    #expect(
      await holdARoundOpen(on: source) {
        source.removeObserver(screen)
        source.addObserver(screen, closure: record)
      })
    // The registration made again gets only what was set after it: the marker.
    #expect(screen.seen == [settlingMarker])
    await runInBackground { source.value = 3 }
      .finished("the setter")
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [settlingMarker, 3, settlingMarker])
  }

  @Test func aRegistrationThatStaysGetsEveryCallInOrder() async {
    // The control: the same scenario without ending the registration delivers both values.
    let source = Observable(0)
    let screen = Screen()
    source.addObserver(screen) { [weak screen] value, _ in screen?.seen.append(value) }
    #expect(await holdARoundOpen(on: source) {})
    #expect(screen.seen == [1, 2, settlingMarker])
  }

  @Test func removeObserverUnderAFloodLetsNoCallArriveAfterItReturned() async {
    for _ in 0..<10 {
      let source = Observable(0)
      let screen = Screen()
      source.addObserver(screen) { [weak screen] value, _ in screen?.seen.append(value) }
      let stop = RecordingLog<Bool>()
      let producer = runInBackground {
        var next = 1
        while stop.events.isEmpty {
          source.value = next
          next += 1
        }
      }
      // Keep the main queue busy while calls pile up behind it.
      let busyUntil = Date().addingTimeInterval(0.02)
      while Date() < busyUntil {}
      source.removeObserver(screen)
      let seenAtRemoval = screen.seen.count
      // The calls queued before the removal get the main queue while the producer goes on.
      await letTheMainQueueRun()
      stop.append(true)
      #expect(await producer.finished("the producer"))
      #expect(await settleMainActorCalls(of: source))
      #expect(screen.seen.count == seenAtRemoval, "calls arrived after removeObserver returned")
    }
  }

}

/// Ending a main-actor registration elsewhere than on the main actor, or from another main-actor
/// callback of the same main-queue turn, drops the calls already waiting for the main queue.
@Suite("Ending a main-actor registration while its calls wait", .serialized)
@MainActor
struct MainActorWaitingCallTests {
  @Test func removeObserverOnAnotherThreadDropsTheCallsAlreadyWaiting() async {
    let source = Observable(0)
    let owner = Owner()
    let screen = Screen()
    source.addObserver(owner) { [weak screen] value, _ in screen?.seen.append(value) }
    onAnotherThreadWhileMainWaits {
      source.value = 1
      source.value = 2
    }
    // Both calls wait for the main queue, which the main actor keeps busy until here.
    onAnotherThreadWhileMainWaits { source.removeObserver(owner) }
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [])
  }

  @Test func cancellingATokenOnAnotherThreadDropsTheCallsAlreadyWaiting() async {
    let source = Observable(0)
    let screen = Screen()
    let token = source.observe { [weak screen] value, _ in screen?.seen.append(value) }
    onAnotherThreadWhileMainWaits {
      source.value = 1
      source.value = 2
    }
    onAnotherThreadWhileMainWaits { token.cancel() }
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [])
  }

  @Test func aCallbackRemovingALaterObserverDropsItsCallsOfTheSameTurn() async {
    let source = Observable(0)
    let first = Owner()
    let second = Owner()
    let screen = Screen()
    source.addObserver(first) { [weak screen] value, _ in
      screen?.seen.append(value)
      if value == 1 { source.removeObserver(second) }
    }
    source.addObserver(second) { [weak screen] value, _ in screen?.secondSeen.append(value) }
    // Queued in one turn: first's 1, second's 1, first's 2, second's 2.
    onAnotherThreadWhileMainWaits {
      source.value = 1
      source.value = 2
    }
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [1, 2, settlingMarker])
    #expect(screen.secondSeen == [])
  }

  @Test func aCallbackCancellingALaterTokenDropsItsCallsOfTheSameTurn() async {
    let source = Observable(0)
    let screen = Screen()
    nonisolated(unsafe) var second: ObservationToken?
    let first = source.observe { [weak screen] value, _ in
      screen?.seen.append(value)
      if value == 1 { second?.cancel() }
    }
    second = source.observe { [weak screen] value, _ in screen?.secondSeen.append(value) }
    onAnotherThreadWhileMainWaits {
      source.value = 1
      source.value = 2
    }
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [1, 2, settlingMarker])
    #expect(screen.secondSeen == [])
    withExtendedLifetime(first) {}
  }

  /// A registration that removes itself in its first waiting call, while another thread's round
  /// is in progress (the registration then stays in the list until that round ends): its next
  /// waiting call, right behind the first in the same turn, must not run.
  @Test func aCallbackRemovingItselfDuringAnotherThreadsRoundDropsItsNextWaitingCall() async {
    let source = Observable(0)
    let owner = Owner()
    let screen = Screen()
    source.addObserver(owner) { [weak screen] value, _ in
      screen?.seen.append(value)
      if value == 1 { source.removeObserver(owner) }
    }
    // The main actor stays busy until round 3 is held: the calls for 1 and 2 wait, in one turn.
    #expect(await holdARoundOpen(on: source, setting: [1, 2, 3]))
    #expect(screen.seen == [1])
  }

  /// The lane holds an owner for the rest of a main-queue turn once a call loaded it: a callback
  /// that lets go of the owner's last reference still ends its waiting calls there. With two
  /// registrations of the owner, whose calls alternate in the turn, the lane holds one owner at
  /// a time, so the other registration's hold does not keep the owner counted alive.
  @Test(arguments: [1, 2])
  func anOwnerDyingInACallbackGetsNoLaterCallOfTheSameTurn(registrations: Int) async {
    let source = Observable(0)
    let screen = Screen()
    nonisolated(unsafe) var owner: Owner? = Owner()
    weak let released = owner
    source.addObserver(owner!, removeIfExists: false) { [weak screen] value, _ in
      screen?.seen.append(value)
      if value == 2 { owner = nil }
    }
    for _ in 1..<registrations {
      source.addObserver(owner!, removeIfExists: false) { [weak screen] value, _ in
        screen?.secondSeen.append(value)
      }
    }
    onAnotherThreadWhileMainWaits {
      for value in 1...4 { source.value = value }
    }
    #expect(await settleMainActorCalls(of: source))
    #expect(screen.seen == [1, 2])
    #expect(screen.secondSeen == (registrations > 1 ? [1] : []))
    #expect(released == nil)
  }
}
