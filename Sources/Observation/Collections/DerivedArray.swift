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

  init(seed: [Element], upstream: ObservationToken, source: AnyObject) {
    self.upstream = upstream
    self.source = source
    // With room to grow, as an appended-to source will make it.
    super.init(initialElements: seed, capacity: 2 * seed.count)
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

  /// Registers on `source`'s change sets and returns the derived array they feed.
  ///
  /// The array is built inside the registration's `.initial` call, from that call's elements,
  /// so it starts from exactly the state the registration saw, and every later change set
  /// reaches it (the core orders the later calls after the `.initial` one).
  ///
  /// - Parameters:
  ///   - source: The array to derive from.
  ///   - seed: Makes the first elements from the source's `.initial` change set.
  ///   - step: Called with the derived array and each later change set of the source.
  /// - Returns: The derived array.
  static func make<Source>(
    from source: ReadOnlyObservableArray<Source>,
    seed: @escaping (ArrayChangeSet<Source>) -> [Element],
    step: @escaping (DerivedArray<Element>, ArrayChangeSet<Source>) -> Void
  ) -> DerivedArray<Element> {
    let link = DerivedArrayLink<Element>()
    // The token exists before the registration, so the derived array can own it from the
    // moment it is built; the link hands it over once, so the closure never holds it.
    link.upstream = ObservationToken(source: source.changes)
    let start = RegistrationStart(array: source)
    let callback: (ArrayChangeSet<Source>, ObservableOptions) -> Void = { change, option in
      guard let change = start.filter(change, option) else { return }
      guard option != .initial else {
        guard let upstream = link.upstream else {
          preconditionFailure("a registration delivered .initial twice")
        }
        link.upstream = nil
        let derived = DerivedArray(seed: seed(change), upstream: upstream, source: source)
        link.built = derived
        link.target = derived
        return
      }
      guard let derived = link.target else { return }
      step(derived, change)
    }
    guard let token = link.upstream else { preconditionFailure("no registration token") }
    source.changes.register(
      .init(token: token, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback,
      sendsInitial: true
    )
    guard let derived = link.built else {
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    link.built = nil
    return derived
  }
}

/// The connection from a source's registration to the derived array it feeds: built in the
/// `.initial` call, held strongly until `make` takes it and weakly after (the derived array owns
/// the registration, whose closure holds this link). Only the registration's calls and `make`
/// touch it, one at a time.
private final class DerivedArrayLink<Element> {
  /// The registration's token, until the `.initial` call gives it to the derived array.
  var upstream: ObservationToken?
  var built: DerivedArray<Element>?
  weak var target: DerivedArray<Element>?
}

// All state lives in `ReadOnlyObservableArray`, guarded by its lock; `upstream` and `source` are
// `let`s, only held to keep the registration and the source alive.
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
