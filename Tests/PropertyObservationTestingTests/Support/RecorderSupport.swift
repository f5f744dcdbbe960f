import PropertyObservation

/// A stand-in for a derived observable built inline (`source.map(transform)`): the source holds
/// it only weakly, so it lives only as long as whoever records or observes it holds it.
func makeDerivedChain(
  from source: Observable<Int>,
  transform: @escaping (Int) -> Int,
  created: (Observable<Int>) -> Void
) -> ReadOnlyObservable<Int> {
  let derived = Observable(transform(source.value))
  source.observe(with: derived) { derived, value in
    derived.value = transform(value)
  }
  created(derived)
  return derived
}

/// A callback-based source that is not an observable, standing in for a binding's target or a
/// Driver: it reports each value through a plain closure.
final class CallbackSource<Value> {
  var onValue: ((Value) -> Void)?

  func emit(_ value: Value) {
    onValue?(value)
  }
}

/// A model value that is neither `Equatable` nor `Sendable`.
final class Account {
  var owner: String

  init(owner: String) {
    self.owner = owner
  }
}
