import PropertyObservation

/// A user whose name the app shows in several places.
final class User {
  let name: Observable<String>

  init(name: String) {
    self.name = Observable(name)
  }
}

/// Shows the user's name; in an app, a label or a view controller.
@MainActor
final class NameLabel {}

let user = User(name: "Madeline")
let label = NameLabel()

user.name.addObserver(label, options: [.initial, .old, .new]) { name, option in
  switch option {
  case .initial: print("starts as \(name)")
  case .old: print("leaving \(name)")
  default: print("now \(name)")
  }
}

user.name.value = "Amelia"
