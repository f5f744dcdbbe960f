// expected: compiles
// A nonisolated closure that captures only `Sendable` values compiles from nonisolated code, and
// runs on the delivering thread.
import Dispatch
import PropertyObservation

final class Totals: Sendable {
  let sum = Observable(0)
}

func mirror(_ score: Observable<Int>, into totals: Totals) -> ObservationToken {
  let label = "score"
  return score.observe(options: [.initial, .new]) { value, _ in
    totals.sum.value += value
    print(label, value)
  }
}

func observeOnAQueue(_ score: Observable<Int>) {
  DispatchQueue.global().async {
    let token = score.observe { value, _ in print(value) }
    score.value = 1
    token.cancel()
  }
}
