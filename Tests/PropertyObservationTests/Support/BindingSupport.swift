import PropertyObservation
import TestSupport

/// A stand-in for a label: a plain class with a settable text that logs every set.
@MainActor final class FakeLabel {
  let log = RecordingLog<String>()
  var text: String? {
    didSet { log.append(text ?? "nil") }
  }
}

/// A stand-in for a reused table cell with two bindable properties.
@MainActor final class FakeCell {
  let log = RecordingLog<String>()
  var title = "" {
    didSet { log.append("title=\(title)") }
  }
  var progressText = "" {
    didSet { log.append("progress=\(progressText)") }
  }
}

/// A model the cells show.
final class FakeModel: Sendable {
  let title: Observable<String>
  let progress: Observable<Int>

  init(title: String, progress: Int = 0) {
    self.title = Observable(title)
    self.progress = Observable(progress)
  }
}

/// Stops the test process with a clear message when two observables set each other endlessly,
/// so that a broken loop guard fails its test instead of hanging the run.
final class EchoLoopBreaker {
  private let rounds = RecordingLog<Int>()

  /// Counts the rounds of `observables`, holding neither them nor anything they hold.
  func watch<Value>(_ observables: Observable<Value>...) {
    let rounds = self.rounds
    for observable in observables {
      observable.addObserver(self, removeIfExists: false) { _, _ in
        rounds.append(1)
        if rounds.events.count > 10_000 { fatalError("Echo loop: a two-way binding never settles") }
      }
    }
  }
}
