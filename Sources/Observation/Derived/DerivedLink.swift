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
/// The link is the registration's token too, so a level of a chain is one object here, not
/// two: the derived observable owns it and cancels it when it goes (see
/// ``DerivedObservable/Upstream``), and the registration's closure holds it (the step captures
/// the link alone, which Swift then uses as the closure's context, allocating nothing). Until
/// the cancel, the link keeps the source alive, as any token does.
///
/// The link holds the derived observable weakly: once the derived observable is gone, values
/// are dropped (a round on another thread may still reach the link after the cancel, see
/// ``ObservationToken/cancel()``). From `.initial` until the builder takes it with
/// ``takeBuilt()``, the link also keeps it alive with a retain of its own, which `takeBuilt()`
/// gives back: a field for that strong reference would put every link in a larger size class.
///
/// Not final only for ``MappingLink``, which keeps `map`'s transform in the link; its members
/// are final, so calling them costs no dynamic dispatch.
class DerivedLink<Value>: ObservationToken {
  /// The source's graph, which a derived observable at a fixed level makes its delivery in
  /// (see ``DerivedObservable/makeGraph()``).
  final let graph: PropagationGraph
  /// Written by the `.initial` call; read by later calls, which the core orders after it.
  private weak var target: DerivedObservable<Value>?

  /// - Parameter source: The observable the link's registration is made on.
  init<Source>(source: ReadOnlyObservable<Source>) {
    graph = source.propagationGraph.root
    super.init(source: source)
  }

  /// Builds the derived observable from the `.initial` value, or sends a change to it.
  final func publish(_ value: Value, _ option: ObservableOptions) {
    guard option != .initial else { return build(seed: value) }
    target?.feed(value)
  }

  @inline(never)
  private func build(seed: Value) {
    precondition(target == nil, "a registration delivered .initial twice")
    guard let source = observed as? any DerivedSource else {
      preconditionFailure("a derived observable was built after its registration ended")
    }
    let derived = DerivedObservable(
      seed: seed, ranking: Rank.above(source, graph: graph), upstream: .one(self))
    target = derived
    // Balanced by `takeBuilt()`, on this thread, before the registering call returns.
    _ = Unmanaged.passRetained(derived)
  }

  /// The derived observable, once the registration has delivered `.initial` (the core does so
  /// inside the registering call); called once.
  final func takeBuilt() -> DerivedObservable<Value> {
    guard let derived = target else {
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    Unmanaged.passUnretained(derived).release()
    return derived
  }
}

// A token is `Sendable` (its state is guarded by its lock stripe), and a link inherits that. The
// link's own state: `graph` is a `let` of a `Sendable` graph; `target` is written once, by the
// `.initial` call, which the core makes inside the registering call before any later call of the
// registration, and read only by those later calls, which reach the entry through the source's
// lock (the entry joins the source's list, or its list of registrations catching up, under that
// lock); other threads only cancel the link, which touches the token's state alone, under its
// lock stripe.
extension DerivedLink: @unchecked Sendable {}

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
    deriveInline(linkedBy: { DerivedLink(source: $0) }, makeStep)
  }

  /// Like ``deriveInline(_:)``, with a link of the operator's own class: one that holds what
  /// the step needs, so that the step captures the link alone, which then serves as the
  /// closure's context (Swift allocates no context for a closure whose one capture is an
  /// object).
  ///
  /// - Parameters:
  ///   - makeLink: Makes the link for a registration on this observable.
  ///   - makeStep: As in ``deriveInline(_:)``.
  /// - Returns: The derived observable, seeded from the `.initial` value.
  func deriveInline<Result, Link: DerivedLink<Result>>(
    linkedBy makeLink: (ReadOnlyObservable<Value>) -> Link,
    _ makeStep: (Link) -> Callback
  ) -> ReadOnlyObservable<Result> {
    // The link, which is the registration's token, exists before the registration, so the
    // derived observable can own it from the moment it is built, inside `.initial`.
    let link = makeLink(self)
    let callback = makeStep(link)
    register(
      NewEntry(token: link, options: [.initial, .new], callback: callback),
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
