import Dispatch
import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// The examples of the "Catching leaks and waiting for the main actor" article, run as written,
/// so that the article cannot drift from what the library does.
@Suite("Catching leaks and waiting article")
@MainActor
struct CatchingLeaksAndWaitingArticleTests {
  final class Account: Sendable {
    let name = Observable("Madeline")
  }

  @MainActor final class AccountViewController {
    var nameText = ""

    func attach(_ account: Account) {
      account.name.observe(with: self) { controller, name in controller.nameText = name }
    }
  }

  @MainActor final class ProfileViewController {
    var nameText = ""

    func show(_ name: Observable<String>) {
      name.observe(with: self, options: [.initial, .new]) { controller, name in
        controller.nameText = name
      }
    }
  }

  @Test func closingTheAccountScreenReleasesItsController() {
    let account = Account()
    expectDeallocation {
      let controller = AccountViewController()
      controller.attach(account)
      account.name.value = "Amelia"
      #expect(controller.nameText == "Amelia")
      return controller
    }
    #expect(account.name.observerCount == 0)
  }

  @Test func aNameLoadedInTheBackgroundReachesTheScreen() async {
    let name = Observable("")
    let controller = ProfileViewController()
    controller.show(name)
    DispatchQueue.global().async { name.value = "Amelia" }
    // The article's 5 s, stretched like every wait of the suite for slow runs (TSan).
    await expectEventually("the loaded name", timeout: .seconds(max(5, Int(testTimeout)))) {
      controller.nameText == "Amelia"
    }
  }
}
