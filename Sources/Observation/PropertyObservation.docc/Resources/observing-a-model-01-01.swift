/// A user whose name the app shows in several places.
final class User {
  var name: String

  init(name: String) {
    self.name = name
  }
}

let user = User(name: "Madeline")
user.name = "Amelia"
