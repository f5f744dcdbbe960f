// expected: compiles
// The race-free forms of the refused snippets, so the harness proves it can compile a good one
// (a wrong module path would make every snippet "fail" for the wrong reason).
import Dispatch
import PropertyObservation

final class ProgressView {
  var fraction = 0.0
}

actor ScoreKeeper {
  var latest = 0

  func record(_ value: Int) {
    latest = value
  }
}

func setFromAnotherThread() {
  let score = Observable(0)
  DispatchQueue.global().async {
    score.value += 1
  }
}

func iterateInOneTask(_ score: Observable<Int>) async {
  var iterator = score.values.makeAsyncIterator()
  _ = await iterator.next()
}

@MainActor
func show(_ progress: Observable<Double>, in view: ProgressView) -> ObservationToken {
  progress.asDriver().drive { view.fraction = $0 }
}

func follow(_ score: Driver<Int>, into keeper: ScoreKeeper) -> ObservationToken {
  score.drive { value in Task { await keeper.record(value) } }
}

func debounced(_ score: Observable<Int>) -> Driver<Int> {
  score.asDriver().debounce(for: .milliseconds(300))
}

/// A model shared with background work: `Sendable` because its observables are `let`s.
final class Profile: Sendable {
  let name = Observable("")
}

/// Main-actor state, touched from observers registered on the main actor: they run there.
@MainActor
final class TitleViewController {
  var prefix = "Now: "
  var title = ""
  let label = ProgressLabel()

  func show(_ profile: Profile) -> ObservationToken {
    profile.name.addObserver(self) { name, _ in self.title = self.prefix + name }
    profile.name.observe(with: self) { controller, name in controller.title = name }
    profile.name.bind(to: label, \.text)
    return profile.name.map { "Now: " + $0 }.observe { title, _ in self.title = title }
  }
}

@MainActor
final class ProgressLabel {
  var text = ""
}

func updateInBackground(_ profile: Profile) {
  DispatchQueue.global().async { profile.name.value = "Jane" }
}

/// `@Observed` in a main-actor model: the model is `Sendable` (it is isolated to the main actor)
/// although the wrapper's storage is a `var`.
@MainActor
final class Settings {
  @Observed var volume = 0
}

func requireSendable<T: Sendable>(_: T.Type) {}

func modelsAreSendable() {
  requireSendable(Profile.self)
  requireSendable(Settings.self)
}
