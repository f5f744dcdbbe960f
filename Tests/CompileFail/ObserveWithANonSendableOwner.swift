// expected-error: type 'Screen' does not conform to the 'Sendable' protocol
// `observe(with:)` passes its owner to the handler on the delivering thread: from nonisolated
// code the owner must be `Sendable` (a `@MainActor` view controller is).
import PropertyObservation

final class Screen {
  var title = ""
}

func show(_ title: Observable<String>, on screen: Screen) {
  title.observe(with: screen) { screen, value in screen.title = value }
}
