// expected-error: main actor-isolated property 'prefix' can not be referenced from a Sendable closure
// A derived observable's transform runs on whichever thread delivers the source's change, so it
// is `@Sendable`: a view controller cannot read its main-actor state from it (read it in the
// observer, which runs on the main actor, instead).
import PropertyObservation

@MainActor
final class TitleViewController {
  var prefix = "Now: "
  var title = ""

  func show(_ name: Observable<String>) -> ReadOnlyObservable<String> {
    name.map { self.prefix + $0 }
  }
}
