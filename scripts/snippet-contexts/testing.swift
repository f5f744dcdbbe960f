// The default context of the PropertyObservationTesting product's docs: the snippet is the body
// of a (synchronous) test, with Swift Testing imported and the recorder and the models it
// records as parameters.
import Dispatch
import PropertyObservation
import PropertyObservationTesting
import Testing

// snippet: include World

extension ViewController {
  func snippet(
    recorder: ObservationRecorder, expected: [ObservationRecorder.Event], user: User,
    model: Model, session: Session, counter: Observable<Int>, score: Observable<Int>,
    label: Label, titleView: TitleView
  ) throws {
    do {
      // snippet: here
    }
  }
}
