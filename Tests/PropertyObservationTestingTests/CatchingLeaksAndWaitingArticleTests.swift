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

  final class Store: Sendable {
    let todos = ObservableArray(["milk"])
    let name = Observable("Madeline")
  }

  /// A screen that observes derived values of the store: a derived array, a derived value and a
  /// driver, each registered with the screen as the owner.
  @MainActor final class TodoListViewController {
    var titles: [String] = []
    var heading = ""
    var greeting = ""

    func attach(_ store: Store) {
      store.todos.map { $0.uppercased() }.addObserver(self, options: [.initial, .new]) {
        [weak self] change in self?.titles = Array(change.elements)
      }
      store.name.map { "\($0)'s list" }.observe(with: self, options: [.initial, .new]) {
        controller, heading in controller.heading = heading
      }
      store.name.map { "Hello, \($0)" }.asDriver().drive(with: self) { controller, greeting in
        controller.greeting = greeting
      }
    }
  }

  @Test func aScreenOfDerivedValuesLeavesNoRegistrationOnceTheStoreHasChanged() {
    let store = Store()
    expectDeallocation {
      let controller = TodoListViewController()
      controller.attach(store)
      store.todos.append("eggs")
      store.name.value = "Amelia"
      #expect((controller.titles, controller.heading) == (["MILK", "EGGS"], "Amelia's list"))
      return controller
    }
    // The derived values the screen observed are still registered on the store: nothing tells
    // them at once that their owner is gone.
    #expect((store.todos.observerCount, store.name.observerCount) == (1, 2))
    // The store's next changes do: each chain finds its owner gone and lets go.
    store.todos.append("bread")
    store.name.value = "Ada"
    #expect((store.todos.observerCount, store.name.observerCount) == (0, 0))
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
