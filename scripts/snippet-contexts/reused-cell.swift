// The bindings article's reused cell: a `User` with an `@Observed` name, two users and a cell.
import PropertyObservation

final class User {
  @Observed var name: String

  init(name: String) {
    self.name = name
  }
}

@MainActor final class Label {
  var text: String?
}

let madeline = User(name: "Madeline")
let ray = User(name: "Ray")
let cell = UserCell()

// snippet: here
