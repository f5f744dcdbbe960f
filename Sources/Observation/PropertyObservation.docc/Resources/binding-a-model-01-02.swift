import PropertyObservation

/// A user whose name the app shows.
final class User {
  @Observed var name: String

  init(name: String) {
    self.name = name
  }
}

/// Stands in for a label: prints its text whenever it is set.
@MainActor
final class Label {
  let name: String
  var text: String? {
    didSet { print("[\(name)] \(text ?? "")") }
  }

  init(name: String) {
    self.name = name
  }
}

let user = User(name: "Madeline")
let nameLabel = Label(name: "name")

user.$name.bind(to: nameLabel, \.text)

user.name = "Amelia"
