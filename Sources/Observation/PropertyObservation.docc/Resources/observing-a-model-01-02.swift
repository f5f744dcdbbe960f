import PropertyObservation

/// A user whose name the app shows in several places.
final class User {
  let name: Observable<String>

  init(name: String) {
    self.name = Observable(name)
  }
}

let user = User(name: "Madeline")
user.name.value = "Amelia"
print(user.name.value)
