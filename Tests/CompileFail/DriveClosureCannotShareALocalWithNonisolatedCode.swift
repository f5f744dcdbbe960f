// expected-error: sending 'count' risks causing data races
// A nonisolated function cannot share a local variable with a `drive(_:)` closure: the closure
// runs on the main actor while the function reads the variable on its own thread.
import PropertyObservation

func countDeliveries(of progress: Observable<Double>) -> Int {
  var count = 0
  let token = progress.asDriver().drive { _ in count += 1 }
  progress.value = 0.5
  token.cancel()
  return count
}
