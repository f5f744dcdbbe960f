import TestSupport
import Testing

@testable import PropertyObservation

/// A value and a capture whose deinit is user code that checks, in debug builds, that the
/// releasing thread holds none of the library's locks.
private final class Payload: @unchecked Sendable {
  let number: Int
  init(_ number: Int) { self.number = number }
  deinit { Lock.assertNotHeld("A user object was released") }
}

/// Written by bindings and drives on whichever thread delivers: its property takes a lock.
private final class Target: Sendable {
  private let stored = LockedValue<Payload?>(nil)
  var payload: Payload? {
    get { stored.value }
    set { stored.value = newValue }
  }
}

/// Issue 18's rule, checked on every path that lets go of user objects: values replaced in the
/// box, in derived pipelines, in Driver lanes and replays; closures of cancelled tokens, removed
/// owners, pruned owners, replaced bindings. A release under a lock stops the child process.
@Suite("Nothing is released under a lock")
struct ReleaseOutsideLockTests {
  @Test func valuesAndClosuresAreReleasedAfterUnlocking() async {
    await #expect(processExitsWith: .success) {
      let source = Observable(Payload(0))
      let derived = source.map { Payload($0.number * 2) }.removeDuplicates {
        $0.number == $1.number
      }
      let main = ManualScheduler()
      let driver = derived.asDriver(policy: .coalescing, scheduler: .manual(main))
      let everyValue = source.asDriver(scheduler: .manual(main))
      let target = Target()
      derived.bind(to: target, \.payload)
      var tokens: [ObservationToken] = []
      var driven: [Target] = []
      let persistent = Target()
      for round in 1...20 {
        let captured = Payload(-round)
        tokens.append(source.observe { _, _ in withExtendedLifetime(captured) {} })
        // Key-path drives: their values are payloads that the lanes and replays let go of.
        let screen = Target()
        driven.append(screen)
        main.runOnMain {
          driver.drive(screen, \.payload)
          everyValue.drive(screen, \.payload)
        }
        do {
          let owner = Target()
          source.addObserver(owner) { _, _ in withExtendedLifetime(captured) {} }
        }
        // Replaces its registration from the round before: that closure, the only holder of
        // its payload, is released by the registering call.
        let replaced = Payload(-1000 - round)
        source.addObserver(persistent) { _, _ in withExtendedLifetime(replaced) {} }
        withObservationTransaction {
          source.value = Payload(round)
          source.value = Payload(round + 100)
        }
        source.value = Payload(round)
        if round % 3 == 0 { Observable(Payload(round)).bind(to: target, \.payload) }
        if round % 2 == 0 {
          tokens.removeFirst().cancel()
          main.runOnMain { driver.stopDriving(driven.removeFirst()) }
        }
        main.runAll()
      }
      tokens.removeAll()
      driven.removeAll()
      withExtendedLifetime(persistent) {}
      source.value = Payload(0)
      main.runAll()
    }
  }

  @Test func bufferedValuesOfAnAsyncSequenceAreReleasedAfterUnlocking() async {
    // Issue 31, item 1: the loop trims values it took, `.newest` replaces one it did not
    // take, and cancellation drops the rest.
    await #expect(processExitsWith: .success) {
      let source = Observable(Payload(0))
      var unbounded = source.values.makeAsyncIterator()
      var newest = source.values(bufferingPolicy: .newest).makeAsyncIterator()
      for round in 1...40 { source.value = Payload(round) }
      for _ in 0...40 { _ = await unbounded.next() }
      _ = await newest.next()
      let cancelled = Task {
        var iterator = source.values.makeAsyncIterator()
        for round in 41...50 { source.value = Payload(round) }
        withUnsafeCurrentTask { $0?.cancel() }
        return await iterator.next() == nil
      }
      #expect(await cancelled.value)
      source.value = Payload(-1)
    }
  }
}
