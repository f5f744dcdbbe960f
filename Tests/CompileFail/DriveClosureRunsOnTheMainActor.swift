// expected-error: actor-isolated property 'latest' can not be mutated from the main actor
// `Driver.drive(_:)` takes a `@MainActor` closure: it runs on the main actor, whatever actor
// subscribed, so it cannot touch another actor's state synchronously.
import PropertyObservation

actor ScoreKeeper {
  var latest = 0

  func follow(_ score: Driver<Int>) -> ObservationToken {
    score.drive { self.latest = $0 }
  }
}
