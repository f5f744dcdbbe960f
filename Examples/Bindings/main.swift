// A small MVC screen without UIKit: plain classes stand in for a label, a switch, a text field
// and a reused table cell. It shows one-way bindings, derived values, two-way bindings, a reused
// cell bound to a second model, the @Observed property wrapper, and saving and restoring the
// models with Codable.
import Foundation
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

/// A switch: the user flips it, so its state is an observable the controller can bind both ways.
@MainActor
final class Switch {
  let isOn = Observable(false)
}

/// A text field: the user types into it.
@MainActor
final class TextField {
  let text = Observable("")
}

/// A table cell that is reused for another row: `show(_:)` binds it again, and the new bindings
/// replace the old ones by themselves.
@MainActor
final class PlayerCell {
  var title = "" {
    didSet { print("  [cell] \(title)") }
  }

  func show(_ player: Player) {
    player.$name.combineLatest(player.$score).map { name, score in "\(name): \(score)" }
      .bind(to: self, \.title)
  }
}

// MARK: - Model

/// A player as the app saves it: plain-looking properties, each observable through `$`.
final class Player: Codable {
  @Observed var name: String
  @Observed var score = 0
  @Observed var isFavorite = false

  init(name: String) {
    self.name = name
  }
}

// MARK: - Controller

/// The detail screen of one player.
@MainActor
final class PlayerScreen {
  let nameLabel = Label("name")
  let scoreLabel = Label("score")
  let rankLabel = Label("rank")
  let favoriteSwitch = Switch()
  let nameField = TextField()
  private let twoWayBindings = ObservationBag()

  func show(_ player: Player) {
    // One-way: the labels follow the model. The targets own these bindings.
    player.$name.bind(to: nameLabel, \.text)
    player.$score.map { "\($0) points" }.bind(to: scoreLabel, \.text)
    // A derived value that only changes now and then: the label hears of actual changes only.
    player.$score.map { $0 >= 100 ? "gold" : "bronze" }.removeDuplicates()
      .bind(to: rankLabel, \.text)

    // Two-way: the controls start with the model's values, and user input goes back to it.
    // Binding a control again ends its binding to the previous player, so showing another
    // player needs no clean-up first.
    player.$name.bindBidirectionally(to: nameField.text).store(in: twoWayBindings)
    player.$isFavorite.bindBidirectionally(to: favoriteSwitch.isOn).store(in: twoWayBindings)
  }
}

// MARK: - Running the screen

let ray = Player(name: "Ray")
let ada = Player(name: "Ada")
ada.score = 120

// The screen and the cell live in this block, as they would live while they are on screen.
weak var closedScreen: PlayerScreen?
weak var closedCell: PlayerCell?
do {
  print("--- Showing Ray ---")
  let screen = PlayerScreen()
  closedScreen = screen
  screen.show(ray)
  print("field: \(screen.nameField.text.value), switch: \(screen.favoriteSwitch.isOn.value)")

  print("--- The game adds points ---")
  ray.score += 40
  ray.score += 70

  print("--- The user types a new name and flips the switch ---")
  screen.nameField.text.value = "Raymond"
  screen.favoriteSwitch.isOn.value = true
  print("model: \(ray.name), favorite: \(ray.isFavorite)")

  print("--- The model changes the name; the field follows ---")
  ray.name = "Ray M."
  print("field: \(screen.nameField.text.value)")

  print("--- One cell, reused for a second row ---")
  let cell = PlayerCell()
  closedCell = cell
  cell.show(ray)
  cell.show(ada)
  print("Ray scores again (the screen still shows Ray; the reused cell stays quiet):")
  ray.score += 1
  print("Ada scores:")
  ada.score += 5

  print("--- Saving and restoring ---")
  let encoder = JSONEncoder()
  encoder.outputFormatting = .sortedKeys
  let saved = try encoder.encode([ray, ada])
  print(String(decoding: saved, as: UTF8.self))
  let restored = try JSONDecoder().decode([Player].self, from: saved)
  print("restored: \(restored.map { "\($0.name) \($0.score)" }.joined(separator: ", "))")
  print("--- The screen shows the restored Ada ---")
  screen.show(restored[1])
  print("field: \(screen.nameField.text.value), switch: \(screen.favoriteSwitch.isOn.value)")
  print("The old Ray object scores (nothing is bound to it any more):")
  ray.score += 1
  print("The restored Ada scores:")
  restored[1].score += 1
}

print("--- The screen and the cell are closed ---")
print("screen deallocated: \(closedScreen == nil), cell deallocated: \(closedCell == nil)")
/// The registrations still able to run on `player`'s observables.
func observers(of player: Player) -> Int {
  player.$name.observerCount + player.$score.observerCount + player.$isFavorite.observerCount
}
print("observers left: Ray \(observers(of: ray)), Ada \(observers(of: ada))")
// The cell's label text came from a chain built inline (combineLatest, then map). A chain learns
// that its target is gone the next time it publishes, and is released then, with its
// registrations on Ada (see "Bindings and lifetimes").
print("Ada scores once more; nothing prints, and the cell's chain lets go of her:")
ada.score += 1
print("observers left: Ray \(observers(of: ray)), Ada \(observers(of: ada))")
