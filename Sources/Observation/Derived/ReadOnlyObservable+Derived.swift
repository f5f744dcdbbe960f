// Derived observables: read-only observables computed from others.
//
// Each operator registers on its sources with `.initial`, so the derived value is seeded from
// exactly the values the registrations saw, atomically with them, and every later change reaches
// it. The registrations feed a `DerivedPipeline`, which runs the transform once per upstream
// change (however many observers the derived observable has) and publishes with `send(_:)`.

extension ReadOnlyObservable {
  /// Returns a read-only observable whose value is `transform` applied to this one's.
  ///
  /// The derived observable is observed and bound like any other
  /// (``addObserver(_:removeIfExists:options:isolation:closure:)``, ``observe(options:isolation:_:)``,
  /// `bind(to:_:)`), but it cannot be set. `transform` runs once when the observable is created and once per change
  /// of this observable, however many observers the derived one has; every change is
  /// published, even when the result equals the previous one (chain ``removeDuplicates()`` to
  /// skip those).
  ///
  /// ```swift
  /// let percent = download.progress.map { "\(Int($0 * 100))%" }
  /// percent.bind(to: progressLabel, \.text)
  /// ```
  ///
  /// ## Lifetime
  ///
  /// The derived observable keeps this observable alive. Nothing keeps the derived observable
  /// alive but its users: a variable, or a registration on it, which keeps it alive for as long
  /// as the registration lasts (a token's until it is cancelled or released, an owner's or a
  /// binding's while the owner lives). So `source.map(f).observe(with: self) { … }` keeps
  /// delivering while `self` lives. When the derived observable is deallocated, its registration
  /// on this observable ends. After an owner dies, the derived observable is released at its
  /// next change: see <doc:BindingsAndLifetimes>.
  ///
  /// > Important: The derived value updates synchronously, on the thread that delivers this
  /// > observable's round, when the round reaches the registration that `map` made: after the
  /// > observers registered before the call, before those registered after it, and before
  /// > the set returns. Its one input is final by then, so it never shows a state that did not
  /// > exist (see <doc:OrderingContract>). Each change is published once, in order;
  /// > changes arriving from several threads at once are published one at a time.
  /// > `transform` is never called concurrently with itself, and no lock is held while it
  /// > runs.
  ///
  /// - Parameter transform: Computes the derived value. It may read other observables; it
  ///   should not set this one.
  /// - Returns: A read-only observable of the transformed value.
  public func map<Result>(_ transform: @escaping @Sendable (Value) -> Result) -> ReadOnlyObservable<
    Result
  > {
    deriveInline(
      linkedBy: { MappingLink(source: $0, transform: transform) },
      { link in link.receive }
    )
  }

  /// Returns a read-only observable that publishes a change only when `isDuplicate` says the new
  /// value differs from the last one it published.
  ///
  /// It starts with this observable's value; each later change is compared with the last
  /// published value, not with the previous upstream value.
  ///
  /// ```swift
  /// let isAdult = person.age.map { $0 >= 18 }.removeDuplicates(by: ==)
  /// let sameRounded = reading.removeDuplicates { abs($0 - $1) < 0.5 }
  /// ```
  ///
  /// Lifetime and threading are those of ``map(_:)``.
  ///
  /// - Parameter isDuplicate: Returns `true` when its second argument (the new value) should be
  ///   skipped because it duplicates the first (the last published value). It runs once per
  ///   upstream change, never concurrently with itself.
  /// - Returns: A read-only observable without consecutive duplicates.
  public func removeDuplicates(
    by isDuplicate: @escaping @Sendable (Value, Value) -> Bool
  ) -> ReadOnlyObservable<Value> {
    removingDuplicates(by: isDuplicate)
  }

  fileprivate func removingDuplicates(
    by isDuplicate: @escaping (Value, Value) -> Bool
  ) -> ReadOnlyObservable<Value> {
    // Compared with the last value published; `.initial` always is.
    let last = LastPublished(isDuplicate: isDuplicate)
    return deriveInline { link in
      { value, option in
        if last.admits(value) { link.publish(value, option) }
      }
    }
  }

  /// Returns a read-only observable that holds this observable's value and the other's as a
  /// pair, and publishes whenever either changes.
  ///
  /// ```swift
  /// let canSubmit = form.name.combineLatest(form.acceptsTerms).map { name, accepts in
  ///   !name.isEmpty && accepts
  /// }
  /// canSubmit.bind(to: submitButton, \.isEnabled)
  /// ```
  ///
  /// Combining an observable with itself, or with a value derived from it, publishes once per
  /// change, with values that existed together (never the new value paired with a stale one):
  /// unlike ``map(_:)``, which has one input, the combination is recomputed when the
  /// propagation that changed a source ends, after every derived value it depends on
  /// (see <doc:OrderingContract>), and before the outermost set returns.
  ///
  /// Lifetime is that of ``map(_:)``: the result keeps both sources alive. A change of either is
  /// published on the thread that delivers it, one at a time and in arrival order when both
  /// change at once on different threads.
  ///
  /// - Parameter other: The second source.
  /// - Returns: A read-only observable of `(value, other.value)`.
  public func combineLatest<Other>(
    _ other: ReadOnlyObservable<Other>
  ) -> ReadOnlyObservable<(Value, Other)> {
    let latest = LatestValues<Value, Other, Void>(third: ())
    let pipeline = DerivedPipeline<CombineEvent<Value, Other, Void>, (Value, Other)>(
      ranking: DerivedRank(above: [self, other]),
      apply: latest.record
    ) {
      let combination = latest.combination
      return (combination.0, combination.1)
    }
    return DerivedObservable.make(pipeline: pipeline) {
      [feed(pipeline) { .first($0) }, other.feed(pipeline) { .second($0) }]
    }
  }

  /// Returns a read-only observable that holds the values of this observable and two others as
  /// a triple, and publishes whenever any of them changes.
  ///
  /// ```swift
  /// let summary = cart.count.combineLatest(cart.total, user.currency).map {
  ///   count, total, currency in "\(count) items, \(total) \(currency)"
  /// }
  /// ```
  ///
  /// Lifetime and threading are those of ``combineLatest(_:)``.
  ///
  /// - Parameters:
  ///   - second: The second source.
  ///   - third: The third source.
  /// - Returns: A read-only observable of `(value, second.value, third.value)`.
  public func combineLatest<Second, Third>(
    _ second: ReadOnlyObservable<Second>,
    _ third: ReadOnlyObservable<Third>
  ) -> ReadOnlyObservable<(Value, Second, Third)> {
    let latest = LatestValues<Value, Second, Third>()
    let pipeline = DerivedPipeline<CombineEvent<Value, Second, Third>, (Value, Second, Third)>(
      ranking: DerivedRank(above: [self, second, third]),
      apply: latest.record,
      current: { latest.combination }
    )
    return DerivedObservable.make(pipeline: pipeline) {
      [
        feed(pipeline) { .first($0) }, second.feed(pipeline) { .second($0) },
        third.feed(pipeline) { .third($0) },
      ]
    }
  }

  /// Registers `pipeline` for this observable's initial value and changes, wrapped by `event`.
  ///
  /// The closure holds the pipeline, which holds the derived observable weakly: a round that
  /// arrives after the derived observable is gone (possible when its token is released on
  /// another thread during a round) finds no target and is dropped.
  func feed<Event, Output>(
    _ pipeline: DerivedPipeline<Event, Output>,
    _ event: @escaping (Value) -> Event
  ) -> ObservationToken {
    let source = ObjectIdentifier(self)
    return observe(options: [.initial, .new], in: .delivering) { value, _ in
      pipeline.receive(event(value), from: source)
    }
  }
}

extension ReadOnlyObservable where Value: Equatable {
  /// Returns a read-only observable that publishes a change only when the new value differs
  /// from the last one it published.
  ///
  /// ```swift
  /// let title = model.title.removeDuplicates()
  /// let token = title.observe(options: [.initial, .new]) { title, _ in print(title) }
  /// model.title.value = "Home"  // prints "Home" only if it was not "Home" already
  /// ```
  ///
  /// Lifetime and threading are those of ``map(_:)``; see also ``removeDuplicates(by:)``.
  ///
  /// - Returns: A read-only observable without consecutive duplicates.
  public func removeDuplicates() -> ReadOnlyObservable<Value> {
    // Not through the public `@Sendable` form: the comparison runs where the pipeline runs,
    // like the user's, and `==` needs no sending.
    removingDuplicates(by: ==)
  }
}
