import PropertyObservation

/// An owner object for the documentation examples: any class instance can own a registration.
final class DocumentationOwner: Sendable {}

/// The model of the "Getting started" token example.
final class DocumentationGame {
  let score = Observable(0)
}

/// The "Getting started" `ScoreBoard`, writing to `output` instead of printing.
final class DocumentationScoreBoard {
  private let bag = ObservationBag()

  @MainActor init(game: DocumentationGame, output: @escaping (String) -> Void) {
    game.score.observe(options: [.initial, .new]) { score, _ in
      output("score: \(score)")
    }.store(in: bag)

    game.score.observeChanges { change in
      output("\(change.oldValue) → \(change.newValue)")
    }.store(in: bag)
  }
}

/// A label stand-in: examples run on Linux, without UIKit.
final class DocumentationLabel {
  var text = ""
}

/// The view controller of the `observe(with:)` example.
@MainActor final class DocumentationTitleController {
  let titleLabel = DocumentationLabel()
}
