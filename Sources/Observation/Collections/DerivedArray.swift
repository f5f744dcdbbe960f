/// A read-only array computed from another one, change set by change set, inside the source's
/// rounds: what ``ReadOnlyObservableArray/map(_:)`` and ``ReadOnlyObservableArray/filter(_:)``
/// return.
///
/// Its step is called by the source registration, one call at a time, `.initial` first and inside
/// the registering call, so the step's own state needs no lock; the elements it publishes are
/// guarded by the array's lock like any other. It owns the registration (which keeps the source
/// alive); the registration's closure holds it weakly, so it lives as long as its users hold it.
final class DerivedArray<Element>: ReadOnlyObservableArray<Element> {
  private let upstream: ObservationToken
  /// The source array, kept alive with its own registrations (the token keeps only its
  /// observable of change sets).
  private let source: AnyObject

  init(upstream: ObservationToken, source: AnyObject) {
    self.upstream = upstream
    self.source = source
    super.init(initialElements: [])
  }

  /// Sets the first elements, from the source's `.initial` call, before anyone can observe them.
  func seed(_ elements: [Element]) {
    // With room to grow, as an appended-to source will make it.
    let snapshot = ArraySnapshot(
      buffer: ElementBuffer(copying: elements, capacity: 2 * elements.count),
      count: elements.count)
    lock.lock()
    let retired = storage.adopt(snapshot)
    lock.unlock()
    withExtendedLifetime(retired) {}
    changes.send(.inserting(snapshot))
  }

  /// Appends `elements` and publishes `change`'s structure for them.
  func publishAppending(_ elements: [Element]) {
    lock.lock()
    let start = storage.count
    var retired: [ElementBuffer<Element>] = []
    for element in elements {
      if let old = storage.append(element) { retired.append(old) }
    }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [], insertions: Array(start..<storage.count),
        moves: [], updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Makes `change.elements` the elements and publishes `change`.
  func publish(_ change: ArrayChangeSet<Element>) {
    lock.lock()
    let retired = storage.adopt(change.elements)
    publishLocked(change)
    withExtendedLifetime(retired) {}
  }

  /// Registers `step` on `source`'s change sets and returns the derived array it feeds.
  ///
  /// - Parameters:
  ///   - source: The array to derive from.
  ///   - makeStep: Called with the derived array, each change set of the source and its option
  ///     (`.initial` first, inside this call).
  /// - Returns: The derived array.
  static func make<Source>(
    from source: ReadOnlyObservableArray<Source>,
    _ makeStep: @escaping (DerivedArray<Element>, ArrayChangeSet<Source>, ObservableOptions) -> Void
  ) -> DerivedArray<Element> {
    let token = ObservationToken(source: source.changes)
    let derived = DerivedArray<Element>(upstream: token, source: source)
    let callback: (ArrayChangeSet<Source>, ObservableOptions) -> Void = {
      [weak derived] change, option in
      guard let derived else { return }
      makeStep(derived, change, option)
    }
    source.changes.register(
      .init(token: token, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback
    )
    return derived
  }
}

// All state lives in `ReadOnlyObservableArray`, guarded by its lock; `upstream` is immutable.
extension DerivedArray: @unchecked Sendable where Element: Sendable {}

extension ArrayChangeSet {
  /// Whether the change only appended elements at the end.
  var isAppendOnly: Bool {
    removals.isEmpty && moves.isEmpty && updates.isEmpty && !isReset
      && (insertions.first ?? oldCount) == oldCount
  }

  /// This change's structure over other elements (the same count after the change).
  func withElements<Other>(_ elements: ArraySnapshot<Other>) -> ArrayChangeSet<Other> {
    ArrayChangeSet<Other>(
      elements: elements, removals: removals, insertions: insertions,
      moves: moves.map { .init(old: $0.old, new: $0.new) },
      updates: updates.map { .init(old: $0.old, new: $0.new) }, isReset: isReset)
  }
}
