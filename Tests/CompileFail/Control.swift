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
