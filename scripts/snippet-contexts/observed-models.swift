// The bindings article's models, which declare their observables with `@Observed`.
import PropertyObservation

final class Profile {
  @Observed var name = "Madeline"
}

final class Form {
  @Observed var name = ""
  @Observed var acceptsTerms = false
}

@MainActor final class TextField {
  let text = Observable("")
}

@MainActor final class Button {
  var isEnabled = false
}

let profile = Profile()
let form = Form()
let nameField = TextField()
let submitButton = Button()

// snippet: here
