// expected-error: type 'Label' does not conform to the 'Sendable' protocol
// A key-path binding writes its target on the delivering thread: from nonisolated code the
// target must be `Sendable` (views are `@MainActor`, and so are).
import PropertyObservation

final class Label {
  var text = ""
}

func show(_ title: Observable<String>, in label: Label) {
  title.bind(to: label, \.text)
}
