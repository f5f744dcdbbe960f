import Dispatch
import PropertyObservation
import Testing

/// The checks of arguments and calls a caller controls, outside the collections, stop the
/// program with their message in every build: the child's standard error must say it, also
/// under `swift test -c release` (where `precondition` would print nothing).
@Suite("Precondition messages", .serialized)
struct PreconditionMessageTests {
  @Test func bindingAnObservableToItselfStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let name = Observable("a")
      name.bind(to: name)
    }
    expectStandardError(of: result, toSay: "An observable cannot be bound to itself.")
  }

  @Test func bindingAnObservableBidirectionallyToItselfStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let name = Observable("a")
      name.bindBidirectionally(to: name).cancel()
    }
    expectStandardError(of: result, toSay: "An observable cannot be bound to itself.")
  }

  @Test func bindingAnObservableToItselfWithConversionsStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let name = Observable("a")
      name.bindBidirectionally(to: name, forward: { $0 }, backward: { $0 }).cancel()
    }
    expectStandardError(of: result, toSay: "An observable cannot be bound to itself.")
  }

  @Test func runningAManualSchedulerFromTwoThreadsAtOnceStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let scheduler = ManualScheduler()
      let entered = DispatchSemaphore(value: 0)
      let release = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        scheduler.runOnMain {
          entered.signal()
          // Bounded: if the check did not stop the program, the child still ends.
          _ = release.wait(timeout: .now() + 60)
        }
      }
      guard entered.wait(timeout: .now() + 60) == .success else { return }
      // The other thread is still inside `runOnMain`.
      scheduler.runOnMain {}
      release.signal()
    }
    expectStandardError(
      of: result, toSay: "A ManualScheduler must be run from one thread at a time.")
  }
}
