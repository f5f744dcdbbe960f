// expected-error: sending 'view' risks causing data races
// A `drive(_:)` closure runs on the main actor, so capturing a non-`Sendable` view from
// nonisolated code sends the view to the main actor while the caller still holds it. (Drive from
// `@MainActor` code instead, as the control snippet does.)
import PropertyObservation

final class ProgressView {
  var fraction = 0.0
}

func show(_ progress: Observable<Double>, in view: ProgressView) -> ObservationToken {
  progress.asDriver().drive { view.fraction = $0 }
}
