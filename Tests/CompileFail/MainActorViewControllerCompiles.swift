// expected: compiles
// A `@MainActor` view controller registers as before: its closures run on the main actor and
// may touch its state and its views.
import PropertyObservation

@MainActor
final class Label {
  var text: String? = ""
}

@MainActor
final class ProfileViewController {
  let nameLabel = Label()
  var renames = 0
  var tokens: [ObservationToken] = []

  func bind(to name: Observable<String>) {
    name.addObserver(self, options: [.initial, .new]) { value, _ in
      self.nameLabel.text = value
      self.renames += 1
    }
    name.observe(with: self) { controller, value in controller.nameLabel.text = value }
    tokens.append(name.observeChanges { change in self.renames += change.newValue.count })
    tokens.append(name.observe(options: [.new], handle))
    name.bind(to: nameLabel, \.text)
    name.asDriver().drive(nameLabel, \.text)
  }

  func handle(_ value: String, _: ObservableOptions) {
    nameLabel.text = value
  }
}
