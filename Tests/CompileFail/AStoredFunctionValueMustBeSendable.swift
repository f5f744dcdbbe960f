// expected-error: passing non-Sendable parameter 'callback' to function expecting a '@Sendable' closure
// A function value stored without `@Sendable` may capture anything: it cannot be registered.
import PropertyObservation

func register(_ score: Observable<Int>, _ callback: @escaping (Int, ObservableOptions) -> Void)
  -> ObservationToken
{
  score.observe(callback)
}
