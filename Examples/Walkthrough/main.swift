// The observer-pattern tutorial's playground, run against the package: a `User` whose name is an
// `Observable<String>`, an observer object, and what happens when that observer goes away.
// The tutorial's KVO half needs NSObject's Objective-C runtime, so it is left out here.
import PropertyObservation

// MARK: - Observable Example

/// The subject: a user whose name can be observed.
public class User {
  /// The user's name, observable without KVO or NSObject.
  public let name: Observable<String>
  /// Creates a user called `name`.
  public init(name: String) {
    self.name = Observable(name)
  }
}

/// The observer: any class instance can own a registration.
public class Observer {}

print("")
print("--- Observable Example ---")

let user = User(name: "Madeline")

var observer: Observer? = Observer()

user.name.addObserver(
  observer!,
  options: [.initial, .new]
) { name, change in
  print("User's name is \(name)")
}

user.name.value = "Amelia"

// The observer is held weakly: once it is gone, its closure is never called again, and nobody
// has to remove it.
weak var releasedObserver = observer
observer = nil

user.name.value = "Amelia is outta here!"

// The closure holds nothing of the observer, so nothing kept it alive, and its registration
// went with it. Had the closure captured it (`{ [observer] name, change in ... }`), the observer
// would still be alive and registered, and this would print `false` and `1`.
let isReleased = releasedObserver == nil
print("observer deallocated: \(isReleased), observers left: \(user.name.observerCount)")
