import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// A screen as the Threading article used to write it: its closure captures `self` strongly, so
/// the observable keeps the controller alive for as long as the model lives.
@MainActor private final class CapturingController {
  var nameText = ""

  func attach(_ name: Observable<String>) {
    name.addObserver(self) { name, _ in self.nameText = name }
  }
}

/// The same screen written as the articles now show it: the owner is passed in, not captured.
@MainActor private final class OwnerPassingController {
  var nameText = ""

  func attach(_ name: Observable<String>) {
    name.observe(with: self, options: [.initial, .new]) { controller, name in
      controller.nameText = name
    }
  }
}

@Suite("expectDeallocation")
@MainActor
struct ExpectDeallocationTests {
  @Test func passesAndReportsNothingWhenTheObjectIsReleased() {
    let name = Observable("Madeline")
    let released = expectDeallocation {
      let controller = OwnerPassingController()
      controller.attach(name)
      name.value = "Amelia"
      #expect(controller.nameText == "Amelia")
      return controller
    }
    #expect(released)
    name.value = "Ada"
    #expect(name.observerCount == 0)
  }

  @Test func failsTheCurrentTestAtTheCallWhenAClosureKeepsTheObjectAlive() {
    let name = Observable("Madeline")
    let line = #line + 2
    withKnownIssue {
      let released = expectDeallocation("the profile screen") {
        let controller = CapturingController()
        controller.attach(name)
        return controller
      }
      #expect(!released)
    } matching: { issue in
      let description = String(describing: issue)
      return issue.sourceLocation?.line == line
        && issue.sourceLocation?.fileID == #fileID
        && description.contains("CapturingController was not deallocated")
        && description.contains("the profile screen")
    }
    #expect(name.observerCount == 1)
  }
}

@Suite("expectEventually")
@MainActor
struct ExpectEventuallyTests {
  @Test func returnsOnceMainQueueWorkMakesTheConditionHold() async {
    let name = Observable("Madeline")
    let controller = OwnerPassingController()
    controller.attach(name)
    // A main-actor callback of a background set runs later, on the main queue.
    Task.detached { name.value = "Amelia" }
    let held = await expectEventually(timeout: .seconds(Int(testTimeout))) {
      controller.nameText == "Amelia"
    }
    #expect(held)
  }

  @Test func failsTheCurrentTestAtTheCallWhenTheDeadlinePasses() async {
    let controller = OwnerPassingController()
    var checks = 0
    let line = #line + 2
    await withKnownIssue {
      let held = await expectEventually("the name never loads", timeout: .milliseconds(50)) {
        checks += 1
        return controller.nameText == "Amelia"
      }
      #expect(!held)
    } matching: { issue in
      let description = String(describing: issue)
      return issue.sourceLocation?.line == line
        && description.contains("timed out after 50 ms")
        && description.contains("the name never loads")
    }
    // Checked at once and again after pauses, not once only.
    #expect(checks > 1)
  }

  @Test func checksOnceMoreAfterTheDeadlineBeforeFailing() async {
    // However late the task runs, the check that fails the wait is one made after the
    // deadline: a zero timeout still gets a second check, which holds here.
    var checks = 0
    let held = await expectEventually(timeout: .nanoseconds(0)) {
      checks += 1
      return checks == 2
    }
    #expect(held)
    #expect(checks == 2)
  }
}
