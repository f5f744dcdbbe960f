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
final class DerivedLink<Value> {
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
  func publish(_ value: Value, _ option: ObservableOptions) {
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
  func takeBuilt() -> DerivedObservable<Value> {
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
    // The token exists before the registration, so the derived observable can own it from the
    // moment it is built, inside `.initial`.
    let token = ObservationToken(source: self)
    let link = DerivedLink<Result>(
      ranking: DerivedRank(above: self), upstream: token)
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
