// expected-error: capture of 'cache' with non-Sendable type 'Cache' in a '@Sendable' closure
// A closure registered from nonisolated code runs on whichever thread sets the value: it cannot
// capture a non-`Sendable` object, which this thread may be using at the same time.
import PropertyObservation

final class Cache {
  var entries: [String] = []
}

func remember(_ name: Observable<String>, in cache: Cache) -> ObservationToken {
  name.observe { value, _ in cache.entries.append(value) }
}
