import PropertyObservation

/// A stand-in for a derived observable built inline (`source.map(transform)`): the source holds
/// it only weakly, so it lives exactly as long as whoever iterates or observes it holds it.
///
/// `created` receives the derived observable so the test can watch its lifetime through a weak
/// reference.
func makeDerivedChain(
  from source: Observable<Int>,
  transform: @escaping @Sendable (Int) -> Int,
  created: (Observable<Int>) -> Void
) -> ReadOnlyObservable<Int> {
  let derived = Observable(transform(source.value))
  source.observe(with: derived) { derived, value in
    derived.value = transform(value)
  }
  created(derived)
  return derived
}

/// A value that is not `Sendable`, to check that iterating values of such a type compiles and
/// works on the main actor.
final class NonSendableBox {
  var number: Int

  init(_ number: Int) {
    self.number = number
  }
}
