package import PropertyObservation

/// Builds the chain `source.map(transform).removeDuplicates()` inline, the way user code does, and
/// hands its last observable to `created` before returning it.
///
/// Only whoever uses the returned observable holds the chain (the source holds its derived
/// observables weakly), so tests pin how long a recorder or an iteration keeps an inline chain
/// alive. `created` lets the test keep a weak reference to watch that lifetime.
package func makeDerivedChain<Value, Result: Equatable>(
  from source: ReadOnlyObservable<Value>,
  transform: @escaping @Sendable (Value) -> Result,
  created: (ReadOnlyObservable<Result>) -> Void
) -> ReadOnlyObservable<Result> {
  let chain = source.map(transform).removeDuplicates()
  created(chain)
  return chain
}
