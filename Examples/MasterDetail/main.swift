// A master/detail screen without UIKit: a list of users (the master), a detail area that follows
// the selected user, an age field bound two ways to the selected user's age through a
// conversion, and a search field whose query is debounced. A ManualScheduler stands in for the
// main queue, so the example moves time by hand and its output is the same on every run.
import PropertyObservation

// MARK: - Views (stand-ins)

/// A label: prints whenever its text is set, so the output shows every update it receives.
@MainActor
final class Label {
  let name: String
  var text: String? {
    didSet { print("  [\(name)] \(text ?? "-")") }
  }

  init(_ name: String) {
    self.name = name
  }
}

/// A text field: the user types into it, and bindings set its text.
@MainActor
final class TextField {
  let text = Observable("")
}

// MARK: - Model

/// A user; `Sendable`, since derived values may read it on any thread.
final class User: Sendable {
  let name: Observable<String>
  let age: Observable<Int>

  init(name: String, age: Int) {
    self.name = Observable(name)
    self.age = Observable(age)
  }
}

// MARK: - Controller

/// The master/detail screen.
@MainActor
final class UsersScreen {
  /// The index of the selected row of the master list.
  let selection = Observable(0)
  let detailLabel = Label("detail")
  let ageField = TextField()
  let searchField = TextField()
  let resultsLabel = Label("results")
  private let bag = ObservationBag()

  init(users: [User], main: ManualScheduler) {
    // Master/detail: the label follows the name of whichever user is selected, renames
    // included, and forgets the previous user at once when the selection moves.
    selection.flatMapLatest { users[$0].name }.map { "Name: \($0)" }
      .bind(to: detailLabel, \.text)

    // The age field edits the selected user's age: Int in the model, String in the field.
    // Text that is not a number is kept in the field and not written to the model. Binding the
    // field again ends its binding to the previous user before the new user's age is pushed
    // into it, so that age never flows back into the previous user. The screen is passed in,
    // not captured: a closure that captured `self` would keep the screen alive.
    selection.observe(with: self, options: [.initial, .new]) { screen, index in
      users[index].age.bindBidirectionally(
        to: screen.ageField.text,
        forward: { String($0) },
        backward: { Int($0) }
      ).store(in: screen.bag)
    }

    // The search runs once the user pauses typing for 300 ms, on the main queue.
    searchField.text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
      .drive(with: resultsLabel) { label, query in
        let matches = users.map(\.name.value).filter {
          query.isEmpty || $0.lowercased().contains(query.lowercased())
        }
        label.text = "\"\(query)\": \(matches.joined(separator: ", "))"
      }
  }
}

// MARK: - Running the screen

let main = ManualScheduler()
let users = [
  User(name: "Ray", age: 34),
  User(name: "Ada", age: 36),
  User(name: "Grace", age: 85),
]

// The screen lives in this block, as it would live while it is shown.
weak var closedScreen: UsersScreen?
do {
  print("--- Showing the screen (Ray is selected) ---")
  let screen = UsersScreen(users: users, main: main)
  closedScreen = screen
  print("age field: \(screen.ageField.text.value)")

  print("--- Ray is renamed; the detail follows ---")
  users[0].name.value = "Raymond"

  print("--- The user selects Ada ---")
  screen.selection.value = 1
  print("age field: \(screen.ageField.text.value), Raymond's age: \(users[0].age.value)")
  print("Raymond is renamed again (no longer selected: the detail stays quiet):")
  users[0].name.value = "Ray"

  print("--- The user types in the age field ---")
  screen.ageField.text.value = "37"
  print("Ada's age: \(users[1].age.value)")
  screen.ageField.text.value = "37x"
  print("Ada's age: \(users[1].age.value) (\"37x\" is not a number and is not written)")
  screen.ageField.text.value = "037"
  print("Ada's age: \(users[1].age.value), field: \(screen.ageField.text.value)")

  print("--- Ada has a birthday; the field follows ---")
  users[1].age.value += 1
  print("age field: \(screen.ageField.text.value)")

  print("--- 300 ms after the screen appeared, the empty search lists everyone ---")
  main.advance(by: .milliseconds(300))
  print("--- The user types \"gr\" in the search field, one key at a time ---")
  main.runOnMain { screen.searchField.text.value = "g" }
  main.advance(by: .milliseconds(100))
  main.runOnMain { screen.searchField.text.value = "gr" }
  print("100 ms after the last key:")
  main.advance(by: .milliseconds(100))
  print("300 ms after the last key:")
  main.advance(by: .milliseconds(200))
  print("--- The user types \"ad\" instead ---")
  main.runOnMain { screen.searchField.text.value = "ad" }
  main.advance(by: .milliseconds(300))
}

print("--- The screen is closed ---")
/// The registrations still able to run on each user's observables, in the list's order.
func observersLeft() -> [Int] {
  users.map { $0.name.observerCount + $0.age.observerCount }
}
print("screen deallocated: \(closedScreen == nil), observers left: \(observersLeft())")
// The detail label's chain (flatMapLatest, then map) learns that its label is gone the next time
// it publishes, and is released then, with its registration on the selected user.
print("Ada is renamed; nothing prints, and the detail's chain lets go of her:")
users[1].name.value = "Ada L."
print("observers left: \(observersLeft())")
