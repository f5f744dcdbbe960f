// `combineLatest` of any number of sources: a variadic free function for sources of different
// types, and one for an array of sources of one type. Free functions, in the style of
// swift-async-algorithms' `combineLatest(_:_:)`, so that every source reads alike at the call
// site and the methods on `ReadOnlyObservable` keep their names unambiguous.

/// Returns a read-only observable that holds the latest value of each source as a tuple, and
/// publishes whenever any of them changes.
///
/// ```swift
/// let summary = combineLatest(cart.count, cart.total, user.currency, user.name).map {
///   count, total, currency, name in "\(name): \(count) items, \(total) \(currency)"
/// }
/// summary.bind(to: label, \.text)
/// ```
///
/// Any number of sources may be combined, of any types. The derived observable starts with the
/// current values of all of them, and each change of one source publishes one tuple, with that
/// source's new value and the others' latest values. Sources that change together (a source
/// passed twice, sources set in one transaction) publish one tuple with all their new values.
///
/// Lifetime and threading are those of ``ReadOnlyObservable/combineLatest(_:)``: the result
/// keeps every source alive, and a change is published on the thread that delivers it, one at
/// a time and in arrival order when several sources change at once on different threads.
///
/// - Parameters:
///   - first: The first source.
///   - others: The other sources.
/// - Returns: A read-only observable of `(first.value, others.value...)`.
public func combineLatest<First, each Other>(
  _ first: ReadOnlyObservable<First>,
  _ others: repeat ReadOnlyObservable<each Other>
) -> ReadOnlyObservable<(First, repeat each Other)> {
  let latest = LatestOfEach(first: LatestSlot<First>(), others: (repeat LatestSlot<each Other>()))
  var sources: [any DerivedSource] = [first]
  for other in repeat each others { sources.append(other) }
  let pipeline = DerivedPipeline<() -> Void, (First, repeat each Other)>(
    ranking: DerivedRank(above: sources),
    apply: { record in
      record()
      return latest.missing.value == 0
    },
    current: latest.combination)
  return DerivedObservable.make(pipeline: pipeline) {
    var tokens = [latest.first.connect(first, to: pipeline, missing: latest.missing)]
    repeat tokens.append(
      (each latest.others).connect(each others, to: pipeline, missing: latest.missing))
    return tokens
  }
}

/// Returns a read-only observable that holds the latest value of each source of `sources`, in
/// order, and publishes whenever any of them changes.
///
/// ```swift
/// let downloads = [Download(), Download(), Download()]
/// let allDone = combineLatest(downloads.map(\.isFinished)).map { $0.allSatisfy { $0 } }
/// allDone.bind(to: doneButton, \.isEnabled)
/// ```
///
/// The derived observable starts with the current values of all sources, and each change of
/// one source publishes a new array, with that source's new value and the others' latest
/// values. An empty array gives an observable whose value is always `[]`. Sources that change
/// together (a source that appears twice, sources set in one transaction) publish one array with
/// all their new values.
///
/// Lifetime and threading are those of ``ReadOnlyObservable/combineLatest(_:)``.
///
/// - Parameter sources: The sources, in the order of the published array.
/// - Returns: A read-only observable of `sources.map(\.value)`.
/// - Complexity: O(*n*) per publication, for *n* sources: each publishes a new array. A
///   transaction that changes *k* of them publishes once, in O(*n* + *k*).
public func combineLatest<Value>(
  _ sources: [ReadOnlyObservable<Value>]
) -> ReadOnlyObservable<[Value]> {
  guard !sources.isEmpty else { return ReadOnlyObservable(initialValue: []) }
  let latest = LatestArray<Value>(count: sources.count)
  let pipeline = DerivedPipeline<IndexedValue<Value>, [Value]>(
    ranking: DerivedRank(above: sources),
    apply: latest.record,
    current: { latest.values }
  )
  return DerivedObservable.make(pipeline: pipeline) {
    sources.enumerated().map { index, source in
      source.feed(pipeline) { IndexedValue(index: index, value: $0) }
    }
  }
}

// MARK: - Variadic state

/// How many sources of a variadic `combineLatest` have not yet delivered a value. Only the
/// pipeline's drainer touches it.
final class MissingCount {
  var value = 0
}

/// The latest value of one source of a variadic `combineLatest`. Only the pipeline's drainer
/// touches it.
final class LatestSlot<Value> {
  var value: Value?

  /// Registers `pipeline` on `source`; each event records the value in this slot.
  func connect<Output>(
    _ source: ReadOnlyObservable<Value>,
    to pipeline: DerivedPipeline<() -> Void, Output>,
    missing: MissingCount
  ) -> ObservationToken {
    missing.value += 1
    return source.feed(pipeline) { value in
      { [self] in
        if self.value == nil { missing.value -= 1 }
        self.value = value
      }
    }
  }

  /// The value, once the pipeline has checked that every slot has one.
  var latest: Value {
    guard let value else { preconditionFailure("combineLatest read a source with no value") }
    return value
  }
}

/// The slots of a variadic `combineLatest`, one per source.
final class LatestOfEach<First, each Other> {
  let first: LatestSlot<First>
  let others: (repeat LatestSlot<each Other>)
  let missing = MissingCount()

  init(first: LatestSlot<First>, others: (repeat LatestSlot<each Other>)) {
    self.first = first
    self.others = others
  }

  /// The tuple of the latest values, once every source has delivered one.
  func combination() -> (First, repeat each Other) {
    (first.latest, repeat (each others).latest)
  }
}

// MARK: - Array state

/// One upstream change of an array `combineLatest`: the position of the source, and its value.
struct IndexedValue<Value> {
  let index: Int
  let value: Value
}

/// The latest value of each source of an array `combineLatest`. Only the pipeline's drainer
/// touches it.
final class LatestArray<Value> {
  private var partial: [Value?]
  private var missing: Int
  /// The latest values, once every source has delivered one: updated in place, so a
  /// propagation that changes many sources copies the array at most once, when it publishes
  /// (the published array shares its storage until the next change).
  private(set) var values: [Value] = []

  init(count: Int) {
    partial = Array(repeating: nil, count: count)
    missing = count
  }

  /// Records `event`; returns whether every source has a value now.
  func record(_ event: IndexedValue<Value>) -> Bool {
    if missing == 0 {
      values[event.index] = event.value
      return true
    }
    if partial[event.index] == nil { missing -= 1 }
    partial[event.index] = event.value
    guard missing == 0 else { return false }
    values = partial.compactMap { $0 }
    partial = []
    return true
  }
}
