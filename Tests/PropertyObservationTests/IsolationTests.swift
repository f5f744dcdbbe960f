import Dispatch
import PropertyObservation
import TestSupport
import Testing

/// Whether the caller runs on the main queue, told by a key set on it (`Thread.isMainThread` is
/// wrong under Swift Testing on Linux, where the main queue is served by another thread).
private enum MainQueueMark {
  static let key: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
  }()

  static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }
}

/// A model a `@MainActor` view controller observes; `Sendable` because its observables are
/// `let`s.
private final class Model: Sendable {
  let name = Observable("")
}

/// A view controller's state: main-actor isolated, like UIKit's.
@MainActor
private final class ViewController {
  var text = ""
  var label = Label()
  var calls: [(value: String, onMain: Bool)] = []
  var ownerCalls: [String] = []

  func attach(_ model: Model) {
    model.name.addObserver(self) { name, _ in
      self.text = name
      self.calls.append((name, MainQueueMark.isCurrent))
    }
    model.name.observe(with: self) { controller, name in controller.ownerCalls.append(name) }
    model.name.bind(to: label, \.text)
  }
}

@MainActor
private final class Label {
  var text = ""
}

private actor Counter {
  var values: [Int] = []

  func attach(to source: Observable<Int>) -> ObservationToken {
    source.observe { value, _ in
      // Actor-isolated state, touched synchronously: this closure runs on the actor.
      self.values.append(value)
    }
  }

  var count: Int { values.count }
}

/// Issue 11: a callback runs in the isolation it was written in.
@Suite("Callback isolation")
struct IsolationTests {
  @MainActor
  @Test func aMainActorObserverSeesEveryBackgroundSetOnTheMainQueueInOrder() async {
    let model = Model()
    let controller = ViewController()
    controller.attach(model)
    let setter = runInBackground {
      for step in 1...2_000 { model.name.value = "\(step)" }
    }
    // Suspending lets the main queue run the hops.
    let deadline = DispatchTime.now() + testTimeout
    while controller.calls.count < 2_000 && DispatchTime.now() < deadline {
      await Task.yield()
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(setter.waitUntilFinished("the background setter"))
    #expect(controller.calls.map(\.value) == (1...2_000).map { "\($0)" })
    #expect(controller.calls.allSatisfy { $0.onMain })
    #expect(controller.ownerCalls == (1...2_000).map { "\($0)" })
    #expect(controller.label.text == "2000")
    #expect(controller.text == "2000")
    // A set on the main actor is delivered before it returns.
    model.name.value = "main"
    #expect(controller.text == "main")
    #expect(controller.label.text == "main")
    #expect(controller.ownerCalls.last == "main")
  }

  @MainActor
  @Test func aMainActorTestCanCaptureALocalLogAndAssertRightAfterASet() {
    let source = Observable(0)
    var log: [Int] = []
    let token = source.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    source.value = 1
    source.value = 2
    #expect(log == [0, 1, 2])
    withExtendedLifetime(token) {}
  }

  @Test func aNonisolatedObserverRunsSynchronouslyOnTheDeliveringThread() async {
    await onItsOwnThread {
      let source = Observable(0)
      let log = RecordingLog<Int>()
      let token = source.observe { @Sendable value, _ in log.append(value) }
      runInBackground { source.value = 1 }.waitUntilFinished("the setter")
      // Delivered inside the set, so it is there as soon as the setter returned.
      #expect(log.events == [1])
      withExtendedLifetime(token) {}
    }
  }

  @Test func anActorObserverRunsOnItsActorInOrder() async {
    let source = Observable(0)
    let counter = Counter()
    let token = await counter.attach(to: source)
    await runInBackground {
      for value in 1...500 { source.value = value }
    }.finished("the setter")
    let deadline = DispatchTime.now() + testTimeout
    while await counter.count < 500 && DispatchTime.now() < deadline {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(await counter.values == Array(1...500))
    withExtendedLifetime(token) {}
  }

  @MainActor
  @Test func mainActorObserversRegisteredUnderAnotherMainSchedulerWaitForThatScheduler() {
    // An observable's main-actor registrations share a lane per main scheduler: one made under a
    // manual scheduler is delivered when that scheduler runs, not on the main queue.
    let source = Observable(0)
    var viaMain: [Int] = []
    var viaManual: [Int] = []
    let onMain = source.observe { value, _ in viaMain.append(value) }
    let manual = ManualScheduler()
    let onManual = MainScheduler.withScheduler(.manual(manual)) {
      source.observe { value, _ in viaManual.append(value) }
    }
    runInBackground { source.value = 1 }.waitUntilFinished("the setter")
    #expect(viaManual.isEmpty)
    #expect(manual.pendingCount == 1)
    manual.runAll()
    #expect(viaManual == [1])
    // The main queue's delivery waits for this test to leave the main actor.
    #expect(viaMain.isEmpty)
    withExtendedLifetime((onMain, onManual)) {}
  }

  @MainActor
  @Test func aMainActorTurnAlsoDeliversCallsThatArriveWhileItRuns() {
    let source = Observable(0)
    var log: [Int] = []
    let manual = ManualScheduler()
    let token = MainScheduler.withScheduler(.manual(manual)) {
      source.observe { value, _ in
        log.append(value)
        if value == 1 { source.value = 2 }
      }
    }
    runInBackground { source.value = 1 }.waitUntilFinished("the setter")
    #expect(manual.pendingCount == 1)
    let start = DispatchTime.now().uptimeNanoseconds
    #expect(manual.runNext())
    if log == [1] {
      // Only a turn that spent the frame's budget (8 ms, documented in "Driving UI from the main
      // queue") leaves what arrived meanwhile to the next turn: a loaded machine, or the
      // sanitizer.
      #expect(DispatchTime.now().uptimeNanoseconds - start > 8_000_000)
      #expect(manual.pendingCount == 1)
      #expect(manual.runNext())
    }
    #expect(log == [1, 2], "the call for 2 arrived during the turn and ran in it")
    #expect(manual.pendingCount == 0)
    withExtendedLifetime(token) {}
  }

  @MainActor
  @Test func aMainActorObserverWhoseTokenIsCancelledGetsNoWaitingCall() async {
    let source = Observable(0)
    var log: [Int] = []
    let token = source.observe { value, _ in log.append(value) }
    runInBackground { source.value = 1 }.waitUntilFinished("the setter")
    // The hop for 1 waits for the main queue; cancelling on the main actor drops it.
    token.cancel()
    // Proves that the hop is gone, not merely late: the marker's call, behind it, arrives first.
    #expect(await settleMainActorCalls(of: source))
    #expect(log.isEmpty)
  }

  @MainActor
  @Test func aNonisolatedObserverRunsInTheRoundAndAMainActorOneAfterItWhenABackgroundThreadSets()
    async
  {
    // The documented interleaving: on a background set, nonisolated callbacks run inside the
    // round on the setting thread; main-actor callbacks run later, on the main queue, in order.
    let source = Observable(0)
    let order = RecordingLog<String>()
    // A closure written in the main actor's code runs there. A `@Sendable` closure made
    // first, which is nonisolated, registered with `isolation: nil`, runs on the delivering
    // thread.
    let nonisolated: @Sendable (Int, ObservableOptions) -> Void = { value, _ in
      order.append("nonisolated \(value)")
    }
    let background = source.observe(isolation: nil, nonisolated)
    let main = source.observe { value, _ in order.append("main \(value)") }
    runInBackground {
      source.value = 1
      order.append("set returned")
    }.waitUntilFinished("the setter")
    #expect(order.events == ["nonisolated 1", "set returned"])
    #expect(await order.waitForCount(3))
    #expect(order.events == ["nonisolated 1", "set returned", "main 1"])
    withExtendedLifetime((background, main)) {}
  }

  @Test func aRegistrationThatReplacesItsOwnersEarlierOnesDuringARoundKeepsItsOwnWaitingCalls() {
    // Made inside a callback, `addObserver` removes the owner's earlier registrations while a
    // round runs, and so ends their main-actor calls that wait (E's call for 1). It ended the
    // calls of its own registration too, whose handle it had made a moment before: D's call for
    // 2, which waits for the (manual) main queue while the propagation goes on, was dropped.
    let score = Observable(0)
    let manual = ManualScheduler()
    let log = RecordingLog<String>()
    let owner = DocumentationOwner()
    MainScheduler.withScheduler(.manual(manual)) {
      score.addObserver(owner) { @MainActor value, _ in log.append("E \(value)") }
    }
    let driver = score.observe { value, _ in
      switch value {
      case 1:
        MainScheduler.withScheduler(.manual(manual)) {
          score.addObserver(owner) { @MainActor value, _ in log.append("D \(value)") }
        }
        score.value = 2
      case 2: score.value = 3
      // Still inside the propagation that made the removal: the call for 2 runs now.
      case 3: manual.runAll()
      default: break
      }
    }
    score.value = 1
    manual.runAll()
    #expect(log.events == ["D 2", "D 3"])
    withExtendedLifetime(driver) {}
  }

}
