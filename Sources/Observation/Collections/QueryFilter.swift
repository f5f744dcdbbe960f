/// The state of a filter by a changing query (``ReadOnlyObservableArray/filter(by:_:)``): it
/// receives the source's change sets and the query's values, from whichever threads deliver
/// them, and applies them to the filtered array one at a time, in the order they arrived.
///
/// One thread at a time drains the events, without the lock held while the predicate and the
/// filtered array's observers run; an event that arrives meanwhile (from an observer on the
/// draining thread, or from another thread) waits in `pending` and is applied by the draining
/// thread after the events before it, as ``ReadOnlyObservableArray`` hands its outbox over.
final class QueryFilter<Element, Query> {
  enum Event {
    case source(ArrayChangeSet<Element>)
    case query(Query)
  }

  private let lock = Lock()
  private let isIncluded: @Sendable (Element, Query) -> Bool
  /// The source array, kept alive while the filtered array lives (which holds this object).
  private let sourceArray: AnyObject
  /// The query's registration, owned here so that it ends with the filtered array.
  var queryToken: ObservationToken?
  // Guarded by `lock`.
  private var pending: [Event] = []
  private var isDraining = true
  // Touched only by the draining thread (and by `make`, which drains first).
  var query: Query?
  var seedChange: ArrayChangeSet<Element>?
  private var elements = ArraySnapshot<Element>([])
  private let membership = Membership()
  weak var derived: DerivedArray<Element>?

  init(sourceArray: AnyObject, isIncluded: @escaping @Sendable (Element, Query) -> Bool) {
    self.sourceArray = sourceArray
    self.isIncluded = isIncluded
  }

  deinit {
    lock.deallocate()
  }

  /// Queues `event`; applies it at once, with the events queued after it, unless a thread is
  /// already draining.
  func receive(_ event: Event) {
    lock.lock()
    pending.append(event)
    guard !isDraining else { return lock.unlock() }
    isDraining = true
    lock.unlock()
    drain()
  }

  /// Applies the queued events in order, until none is left; the caller is the draining thread.
  func drain() {
    while true {
      lock.lock()
      guard !pending.isEmpty else {
        isDraining = false
        return lock.unlock()
      }
      let event = pending.removeFirst()
      lock.unlock()
      apply(event)
    }
  }

  /// The filtered elements of the source's `.initial` change set under the current query.
  func seed() -> [Element] {
    guard let change = seedChange, let query else {
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    seedChange = nil
    elements = change.elements
    membership.included = elements.map { isIncluded($0, query) }
    return elements.indices.filter { membership.included[$0] }.map { elements[$0] }
  }

  private func apply(_ event: Event) {
    guard let derived, let query else { return }
    switch event {
    case .source(let change):
      elements = change.elements
      let filtered = ReadOnlyObservableArray<Element>.filtered(
        change, membership: membership, isIncluded: { [isIncluded] in isIncluded($0, query) })
      if !filtered.isEmpty || filtered.isReset { derived.publish(filtered) }
    case .query(let query):
      self.query = query
      if let change = refiltered(by: query) { derived.publish(change) }
    }
  }

  /// The filtered array's change when the query becomes `query`: the elements that leave are
  /// removals, the ones that enter insertions; the others keep their order, so nothing moves.
  ///
  /// - Complexity: O(*n*), with one call of the predicate per element of the source.
  private func refiltered(by query: Query) -> ArrayChangeSet<Element>? {
    var removals: [Int] = []
    var insertions: [Int] = []
    var filtered: [Element] = []
    var oldOffset = 0
    var included = membership.included
    for (offset, element) in elements.enumerated() {
      let wasIncluded = included[offset]
      let isIncludedNow = isIncluded(element, query)
      included[offset] = isIncludedNow
      if wasIncluded && !isIncludedNow { removals.append(oldOffset) }
      if isIncludedNow && !wasIncluded { insertions.append(filtered.count) }
      if isIncludedNow { filtered.append(element) }
      if wasIncluded { oldOffset += 1 }
    }
    membership.included = included
    guard !removals.isEmpty || !insertions.isEmpty else { return nil }
    return ArrayChangeSet(
      elements: ArraySnapshot(filtered), removals: removals, insertions: insertions, moves: [],
      updates: [])
  }

  /// Registers on `query` and on `source`'s change sets, and returns the filtered array they
  /// feed.
  static func make(
    from source: ReadOnlyObservableArray<Element>, by query: ReadOnlyObservable<Query>,
    isIncluded: @escaping @Sendable (Element, Query) -> Bool
  ) -> DerivedArray<Element> {
    // Starts as the draining thread: events that arrive before the filtered array exists wait
    // until it does.
    let filter = QueryFilter(sourceArray: source, isIncluded: isIncluded)
    let queryToken = ObservationToken(source: query)
    let queryCallback: (Query, ObservableOptions) -> Void = { [weak filter] value, option in
      guard let filter else { return }
      if option == .initial { filter.query = value } else { filter.receive(.query(value)) }
    }
    query.register(
      .init(token: queryToken, options: [.initial, .new], callback: queryCallback),
      replacing: false, initial: queryCallback, sendsInitial: true)
    let upstream = ObservationToken(source: source.changes)
    // Where the registration starts: the array's elements, and no change set they include.
    let start = RegistrationStart(array: source)
    let callback: (ArrayChangeSet<Element>, ObservableOptions) -> Void = {
      [weak filter] change, option in
      guard let filter, let change = start.filter(change, option) else { return }
      if option == .initial { filter.seedChange = change } else { filter.receive(.source(change)) }
    }
    source.changes.register(
      .init(token: upstream, options: [.initial, .new], callback: callback),
      replacing: false, initial: callback, sendsInitial: true)
    let derived = DerivedArray(seed: filter.seed(), upstream: upstream, source: filter)
    filter.derived = derived
    filter.queryToken = queryToken
    filter.drain()
    return derived
  }
}

// `pending` and `isDraining` are guarded by `lock`; the rest is touched by the draining thread
// only, one event at a time. The predicate is `@Sendable`; the elements and queries it holds
// cross threads only when they are `Sendable`.
extension QueryFilter: @unchecked Sendable where Element: Sendable, Query: Sendable {}
