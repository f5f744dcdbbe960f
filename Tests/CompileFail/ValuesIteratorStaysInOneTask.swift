// expected-error: sending value of non-Sendable type
// expected-error: risks causing data races
// `ObservableValues.Iterator` is not `Sendable` (its conformance is marked unavailable): one
// iterator is one consumer, so it cannot be sent to another task while this task still uses it.
import PropertyObservation

func iterateFromTwoTasks(_ score: Observable<Int>) async {
  let iterator = score.values.makeAsyncIterator()
  Task {
    var theirs = iterator
    _ = await theirs.next()
  }
  var ours = iterator
  _ = await ours.next()
}
