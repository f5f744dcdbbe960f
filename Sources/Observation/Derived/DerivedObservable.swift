/// A read-only observable whose value is computed from other observables: what
/// ``ReadOnlyObservable/map(_:)``, ``ReadOnlyObservable/removeDuplicates(by:)`` and
/// ``ReadOnlyObservable/combineLatest(_:)`` return.
///
/// It owns one token per upstream registration, and a token keeps its observable alive, so a
/// derived observable keeps its sources alive. Nothing upstream refers to it strongly (the
/// registrations reach it through a ``DerivedLink`` or a ``DerivedPipeline`` that holds it
/// weakly), so it lives only as long as its users hold it; when it goes, it cancels its tokens,
/// which ends the upstream registrations.
final class DerivedObservable<Value>: ReadOnlyObservable<Value> {
  /// Written only by `init` and `deinit`, when no other reference exists; read by
  /// ``makeGraph()`` in between.
  private var upstream: Upstream

  /// The registrations on the sources, which the derived observable owns. A one-input operator
  /// (`map`, a filter, `removeDuplicates`) holds its one link, which is its token, without an
  /// array: a level of a chain is one allocation smaller.
  enum Upstream {
    case none
    case one(DerivedLink<Value>)
    case many([ObservationToken])
  }
  /// Where this observable stands in the order of recomputation: a fixed level, or a rank
  /// shared with its pipeline, if any, and raised when a `flatMapLatest` upstream switches to a
  /// higher-ranked observable.
  let ranking: Rank

  init(seed: Value, ranking: Rank, upstream: Upstream) {
    self.upstream = upstream
    self.ranking = ranking
    super.init(initialValue: seed)
  }

  /// Nobody owns a derived observable but its users, so each registration on it keeps it alive
  /// while the registration lasts: a chain built inline and observed with an owner keeps working.
  override var keptAliveByRegistrations: AnyObject? { self }

  /// The graph its sources joined when it was built: its rank's, or at a fixed level, its one
  /// source's.
  override func makeGraph() -> PropagationGraph {
    switch (ranking, upstream) {
    case (.tracked(let rank), _): rank.graph
    case (.level, .one(let link)): link.graph
    case (.level, _): preconditionFailure("a derived observable at a fixed level has one source")
    }
  }

  deinit {
    // Cancelling a token can release the observable it observes, and so on up a chain: hand the
    // tokens to the thread's context, which cancels a chain one link after another instead of
    // one inside another, so its depth does not grow the stack. A link must be cancelled: its
    // registration's closure holds it too.
    var taken = Upstream.none
    swap(&taken, &upstream)
    // Every reference leaves with the array, so the last one goes inside the release loop.
    let tokens: [ObservationToken]
    switch consume taken {
    case .none: return
    case .one(let link): tokens = [link]
    case .many(let many): tokens = many
    }
    ObservationContext.current.release(consume tokens)
  }

  /// Registers on the sources through `register`, seeds the value from the `.initial` values the
  /// registrations delivered, and connects the pipeline.
  ///
  /// - Parameters:
  ///   - pipeline: A new pipeline; the caller must not have used it.
  ///   - register: Registers the upstream observers, which feed `pipeline`, and returns their
  ///     tokens.
  /// - Returns: The derived observable, owning the tokens.
  static func make<Event>(
    pipeline: DerivedPipeline<Event, Value>,
    register: () -> [ObservationToken]
  ) -> DerivedObservable<Value> {
    let tokens = register()
    // The core delivers `.initial` inside the registering call, even while another thread is
    // delivering a round, so every source has reported its value by now.
    guard let seed = pipeline.seed() else {
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    let derived = DerivedObservable(
      seed: seed, ranking: .tracked(pipeline.ranking), upstream: .many(tokens))
    pipeline.attach(derived)
    return derived
  }
}

// All other state lives in `ReadOnlyObservable`, guarded by its lock; `upstream` is written only
// by `init` and `deinit`, when no other reference exists (`makeGraph()` reads it in between,
// under the observable's lock), and `ranking` is a `let` whose tracked rank's state is guarded
// by `DerivedRank.graphLock`.
extension DerivedObservable: @unchecked Sendable where Value: Sendable {}
