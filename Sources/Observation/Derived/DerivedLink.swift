/// The connection from a source's registration to a derived observable that has that one
/// source and is computed inline, inside the source's round (``ReadOnlyObservable/map(_:)``,
/// ``ReadOnlyObservable/removeDuplicates(by:)``, the filters).
///
/// Such an operator needs no queue, no scheduling and no lock: its only input is final as soon
/// as the source's round reaches its registration, and the core calls a registration one call
/// at a time, `.initial` first and inside the registering call, before any round can reach it.
/// So the `.initial` call builds the derived observable (on the builder's thread), and every
/// later call, on whichever thread delivers, finds it there: the core's lock orders those calls
/// after the `.initial` one.
///
/// The link holds the derived observable weakly (the derived observable owns the registration,
/// whose closure holds the link): once the derived observable is gone, values are dropped. Until
/// then, the builder holds it through ``takeBuilt()``.
///
/// Not final only for ``MappingLink``, which keeps `map`'s transform in the link; its members
/// are final, so calling them costs no dynamic dispatch.
class DerivedLink<Value> {
  private let ranking: DerivedRank
  /// Where the build stands, on the builder's thread only: the registration waiting to be
  /// handed to the derived observable, then the observable until the builder takes it. One
  /// field for both, since they never exist at once.
  private var stage: Stage
  /// Written by the `.initial` call; read by later calls, which the core orders after it.
  private weak var target: DerivedObservable<Value>?

  private enum Stage {
    /// The registration feeding this link, which the derived observable will own.
    case waiting(ObservationToken)
    /// The derived observable, from `.initial` until the builder takes it.
    case built(DerivedObservable<Value>)
    case taken
  }

  /// - Parameters:
  ///   - ranking: The derived observable's rank, above the source's.
  ///   - upstream: The registration that will feed this link; the derived observable owns it.
  init(ranking: DerivedRank, upstream: ObservationToken) {
    self.ranking = ranking
    stage = .waiting(upstream)
  }

  /// Builds the derived observable from the `.initial` value, or sends a change to it.
  final func publish(_ value: Value, _ option: ObservableOptions) {
    guard option != .initial else { return build(seed: value) }
    target?.feed(value)
  }

  @inline(never)
  private func build(seed: Value) {
    guard case .waiting(let upstream) = stage else {
      preconditionFailure("a registration delivered .initial twice")
    }
    let derived = DerivedObservable(seed: seed, ranking: ranking, upstream: .one(upstream))
    stage = .built(derived)
    target = derived
  }

  /// The derived observable, once the registration has delivered `.initial` (the core does so
  /// inside the registering call).
  final func takeBuilt() -> DerivedObservable<Value> {
    guard case .built(let derived) = stage else {
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    stage = .taken
    return derived
  }
}

extension ReadOnlyObservable {
  /// Registers the step that `makeStep` makes for this observable's `.initial` value and
  /// changes, to feed a derived observable computed inline (see `DerivedLink`), and returns that
  /// observable.
  ///
  /// - Parameter makeStep: Given the link, returns the step: it receives each value with its
  ///   option (`.initial` first, then `.new`) and publishes what the operator makes of it
  ///   through the link; for `.initial` it must publish. The step captures the link itself, so a
  ///   change costs one call per operator.
  /// - Returns: The derived observable, seeded from the `.initial` value.
  func deriveInline<Result>(
    _ makeStep: (DerivedLink<Result>) -> Callback
  ) -> ReadOnlyObservable<Result> {
    deriveInline(linkedBy: DerivedLink.init, makeStep)
  }

  /// Like ``deriveInline(_:)``, with a link of the operator's own class: one that holds what
  /// the step needs, so that the step captures the link alone, which then serves as the
  /// closure's context (Swift allocates no context for a closure whose one capture is an
  /// object).
  ///
  /// - Parameters:
  ///   - makeLink: Makes the link from the derived observable's rank and the registration
  ///     that will feed it.
  ///   - makeStep: As in ``deriveInline(_:)``.
  /// - Returns: The derived observable, seeded from the `.initial` value.
  func deriveInline<Result, Link: DerivedLink<Result>>(
    linkedBy makeLink: (DerivedRank, ObservationToken) -> Link,
    _ makeStep: (Link) -> Callback
  ) -> ReadOnlyObservable<Result> {
    // The token exists before the registration, so the derived observable can own it from the
    // moment it is built, inside `.initial`.
    let token = ObservationToken(source: self)
    let link = makeLink(DerivedRank(above: self), token)
    let callback = makeStep(link)
    register(
      NewEntry(token: token, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback,
      sendsInitial: true
    )
    return link.takeBuilt()
  }
}

/// The last value a `removeDuplicates` published, in a slot rather than an optional: this code
/// runs unspecialized, where every `Optional<Value>` costs a generic metadata look-up. Only
/// the registration's calls touch it, one at a time, `.initial` first.
final class LastPublished<Value> {
  private let slot = UnsafeMutablePointer<Value>.allocate(capacity: 1)
  private var hasValue = false
  private let isDuplicate: (Value, Value) -> Bool

  init(isDuplicate: @escaping (Value, Value) -> Bool) {
    self.isDuplicate = isDuplicate
  }

  deinit {
    if hasValue { slot.deinitialize(count: 1) }
    slot.deallocate()
  }

  /// Records `value` and returns `true`, unless it duplicates the last value recorded.
  func admits(_ value: Value) -> Bool {
    guard hasValue else {
      slot.initialize(to: value)
      hasValue = true
      return true
    }
    if isDuplicate(slot.pointee, value) { return false }
    slot.pointee = value
    return true
  }
}
