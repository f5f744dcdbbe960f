import PropertyObservation

/// The user of the "Getting started" binding-layer section and the binding articles.
final class DocumentationUser {
  @Observed var name: String

  init(name: String) {
    self.name = name
  }
}

/// A label stand-in with an optional text, as UIKit's has; logs every set.
@MainActor final class DocumentationTextLabel {
  private(set) var log: [String] = []
  var text: String? {
    didSet { log.append(text ?? "nil") }
  }
}

/// The reused cell of "Bindings and lifetimes".
final class DocumentationUserCell {
  let titleLabel = DocumentationTextLabel()

  @MainActor func show(_ user: DocumentationUser) {
    user.$name.bind(to: titleLabel, \.text)
  }
}

/// The `Player` of "Bindings and lifetimes": `@Observed` properties, synthesized `Codable`.
final class DocumentationPlayer: Codable {
  @Observed var name = "Ray"
  @Observed var score = 0
}
