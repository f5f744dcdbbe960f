/// An array that can be read and observed change by change, but not modified: the common base
/// of ``ObservableArray`` and of the derived arrays that ``map(_:)`` and ``filter(_:)`` return.
///
/// Observers receive an ``ArrayChangeSet`` per change: removals, insertions, moves and updates,
/// with a snapshot of the elements after it. With `.initial` they first receive, inside the
/// registering call, one change set that inserts every element:
///
/// ```swift
/// func show(_ todos: ReadOnlyObservableArray<Todo>) -> ObservationToken {
///   todos.observe(options: [.initial, .new]) { changes in
///     print("+\(changes.insertions) -\(changes.removals)")
///   }
/// }
/// ```
///
/// To observe the whole array as a value (for `map`, bindings, `values` or a `Driver`), use
/// ``asObservable()``.
///
/// ## Ordering and threads
///
/// Change sets are delivered through an ordinary ``ReadOnlyObservable``, so every rule of the
/// ordering contract and of the Threading article holds for them: each observer receives every
/// change set once, in the order the changes were made, in the isolation it registered from (a
/// main-actor observer of changes made on background threads receives each change set, in
/// order, with its own snapshot); removal, weak owners and tokens behave as they do for a value.
///
/// > Important: A change made on one thread while another thread is delivering this array's
/// > change sets is applied at once (``elements`` shows it) and delivered by that other thread,
/// > right after the change sets before it; the changing call returns without waiting. A change
/// > made inside an observer's callback is delivered after the current change set, before the
/// > outermost change returns. No lock is held while observers run.
public class ReadOnlyObservableArray<Element> {
  let lock = Lock()
  // Guarded by `lock`.
  var storage: ElementStorage<Element>
  /// Counts the changes, so an edit computed without the lock can tell whether it is stale.
  var version: UInt = 0
  /// Change sets made but not yet handed to `changes`, in the order they were made.
  private var outbox: [ArrayChangeSet<Element>] = []
  /// Whether a thread is handing the outbox to `changes`; only that thread does.
  private var isSending = false
  /// Whether `outbox` holds change sets: checked instead of the generic array itself, which
  /// costs a metadata look-up in this unspecialized code.
  private var hasOutbox = false
  /// The merged change set of a transaction in progress: every change made until it ends joins
  /// it, whichever thread makes it.
  private var transactionChanges: ArrayChangeSet<Element>?
  /// The elements before the transaction in progress, and their version: what a registration
  /// made meanwhile starts from (the transaction's merged change set applies to them). Kept
  /// from its first change on, which therefore copies the storage instead of editing it.
  private var transactionBase: (elements: ArraySnapshot<Element>, version: UInt)?

  /// An empty snapshot, made once: the elements of the change set `changes` keeps once it is
  /// delivered (see `letGoOfDelivered(_:)`).
  private let noElements = ArraySnapshot<Element>([])

  /// Delivers the change sets, one per round, in the order they were made; holds the last one
  /// handed to it, without its elements once it is delivered (a registration's `.initial`
  /// starts from ``startingPoint(from:)``).
  let changes: ReadOnlyObservable<ArrayChangeSet<Element>>

  init(initialElements elements: some Collection<Element>, capacity: Int = 0) {
    storage = ElementStorage(elements, capacity: capacity)
    // Held without elements from the start, so the first edit finds the storage unshared.
    changes = ReadOnlyObservable(
      initialValue: ArrayChangeSet.inserting(storage.snapshot).unpinned(noElements))
  }

  deinit {
    lock.deallocate()
  }

  /// A snapshot of the elements now, including changes whose change sets are still being
  /// delivered.
  ///
  /// - Complexity: O(1): the snapshot shares the array's storage. While it is kept, an edit of
  ///   an ``ObservableArray`` other than an append copies the storage first (one block copy).
  public final var elements: ArraySnapshot<Element> {
    lock.lock()
    defer { lock.unlock() }
    return storage.snapshot
  }

  /// The number of elements now.
  public final var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return storage.count
  }

  // MARK: - Observing

  /// Registers `closure` to receive each change set, until the returned token is cancelled or
  /// released.
  ///
  /// ```swift
  /// let token = todos.observe(options: [.initial, .new]) { changes in
  ///   print(changes)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - options: `.initial` (a change set inserting every element, delivered inside this call)
  ///     and `.new` (every later change set); `[.new]` by default. Other options trap with
  ///     "an array's change sets are observed with .initial and .new only": observe
  ///     ``asObservable()`` for old and new arrays.
  ///   - isolation: Where `closure` runs when it reports no isolation of its own; see
  ///     ``ReadOnlyObservable/observe(options:isolation:_:)``.
  ///   - closure: Receives each change set, in order, in its own isolation (`@Sendable`: from
  ///     nonisolated code it runs on the delivering thread).
  /// - Returns: The token that owns the registration.
  public final func observe(
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ closure:
      @escaping @isolated(any) @Sendable (ArrayChangeSet<Element>) -> Void
  ) -> ObservationToken {
    Self.check(options)
    let call = CallbackIsolation.synchronous(closure)
    let chain = keptAliveByObservers
    let start = RegistrationStart(array: self)
    return changes.observe(
      options: options, in: CallbackIsolation(of: closure.isolation, calledFrom: isolation)
    ) { change, option in
      withExtendedLifetime(chain) {}
      guard let change = start.filter(change, option) else { return }
      call(change)
    }
  }

  /// Registers `closure` to receive each change set while `observer` is alive.
  ///
  /// The array holds `observer` weakly, as ``ReadOnlyObservable/addObserver(_:removeIfExists:options:isolation:closure:)``
  /// does; ``removeObserver(_:)`` ends the registration.
  ///
  /// - Parameters:
  ///   - observer: The owner of the registration, held weakly.
  ///   - removeIfExists: Whether the owner's earlier `addObserver` registrations on this array
  ///     are removed first; `true` by default.
  ///   - options: `.initial` and `.new`, as for ``observe(options:isolation:_:)``.
  ///   - isolation: Where `closure` runs when it reports no isolation of its own.
  ///   - closure: Receives each change set, in order, in its own isolation.
  public final func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) closure:
      @escaping @isolated(any) @Sendable (ArrayChangeSet<Element>) -> Void
  ) {
    Self.check(options)
    let call = CallbackIsolation.synchronous(closure)
    let chain = keptAliveByObservers
    let start = RegistrationStart(array: self)
    changes.addObserver(
      observer, removeIfExists: removeIfExists, options: options,
      in: CallbackIsolation(of: closure.isolation, calledFrom: isolation)
    ) { change, option in
      withExtendedLifetime(chain) {}
      guard let change = start.filter(change, option) else { return }
      call(change)
    }
  }

  /// Removes every registration owned by `observer` on this array; see
  /// ``ReadOnlyObservable/removeObserver(_:)``.
  ///
  /// - Parameter observer: The owner passed to ``addObserver(_:removeIfExists:options:isolation:closure:)``.
  public final func removeObserver(_ observer: AnyObject) {
    changes.removeObserver(observer)
  }

  /// The number of registrations that can still be called.
  public final var observerCount: Int {
    changes.observerCount
  }

  /// What a registration on this array keeps alive: a derived array (from `map` or `filter`),
  /// whose only owners are its users, as a registration on a derived observable keeps it;
  /// nothing for an ``ObservableArray``, which its model owns. The cycle through the array's own
  /// observers ends with the registration.
  final var keptAliveByObservers: AnyObject? {
    self is ObservableArray<Element> ? nil : self
  }

  private static func check(_ options: ObservableOptions) {
    require(
      options.isSubset(of: [.initial, .new]),
      "an array's change sets are observed with .initial and .new only")
  }

  /// Returns a read-only observable of the whole array, updated after each change set.
  ///
  /// It is an ordinary ``ReadOnlyObservable``, so `map`, bindings, `values` and a `Driver` work
  /// on it, and `.old` delivers the previous array. It keeps this array alive, and lives as long
  /// as its users hold it.
  ///
  /// ```swift
  /// let count = todos.asObservable().map { "\($0.count) to do" }
  /// ```
  ///
  /// - Returns: An observable of the elements, updated inside each round of this array's change
  ///   sets.
  /// - Complexity: Each change costs one block copy of the elements while the observable lives
  ///   (it makes an array), on top of the change itself.
  public final func asObservable() -> ReadOnlyObservable<[Element]> {
    let token = ObservationToken(source: changes)
    let view = ArrayView<Element>(upstream: token, array: self)
    let start = RegistrationStart(array: self)
    let callback: (ArrayChangeSet<Element>, ObservableOptions) -> Void = {
      [weak view] change, option in
      guard let change = start.filter(change, option) else { return }
      view?.send(Array(change.elements))
    }
    changes.register(
      .init(token: token, options: [.initial, .new], callback: callback),
      replacing: false,
      initial: callback,
      sendsInitial: true
    )
    return view
  }

  // MARK: - Publishing (for ObservableArray and the derived arrays)

  /// Records `change`, which the caller has just applied to `storage` under the lock, and
  /// delivers it; entered with the lock held, returns with it released.
  ///
  /// Inside a transaction the change joins the transaction's merged change set instead, and so
  /// does every change until the transaction ends, whichever thread makes it (delivering another
  /// thread's change before the transaction's would break the order of the change sets).
  final func publishLocked(_ change: ArrayChangeSet<Element>) {
    version &+= 1
    var change = change
    change.version = version
    if let pending = transactionChanges {
      var merged = pending.merged(with: change)
      merged.version = version
      transactionChanges = merged
      lock.unlock()
      withExtendedLifetime(pending) {}
      return
    }
    let context = ObservationContext.current
    if context.isInTransaction {
      transactionChanges = change
      lock.unlock()
      context.join(self) { ArrayTransaction(array: self) }
      return
    }
    enqueueLocked(change)
  }

  /// Ends a transaction: delivers its merged change set.
  final func commitTransaction() {
    lock.lock()
    let base = transactionBase
    transactionBase = nil
    guard let pending = transactionChanges else {
      lock.unlock()
      withExtendedLifetime(base) {}
      return
    }
    transactionChanges = nil
    enqueueLocked(pending)
    withExtendedLifetime(base) {}
  }

  /// Called under the lock before any change to `storage`: whether the change may edit the
  /// storage in place (when nothing else refers to it). Not inside a transaction, whose
  /// elements before it are kept for registrations made meanwhile (see `transactionBase`).
  final func mayEditInPlaceLocked() -> Bool {
    guard transactionChanges == nil else { return false }
    guard ObservationContext.current.isInTransaction else { return true }
    if transactionBase == nil { transactionBase = (storage.snapshot, version) }
    return false
  }

  /// What a registration starts from, given the change set its `.initial` call received (the
  /// last one handed to `changes`): that change set's elements, or, once they were let go
  /// (see `letGoOfDelivered(_:)`), the array's own, with the version they include. The
  /// registration then skips the change sets up to that version, which it may still receive.
  final func startingPoint(
    from held: ArrayChangeSet<Element>
  ) -> (elements: ArraySnapshot<Element>, version: UInt) {
    guard held.isUnpinned else { return (held.elements, held.version) }
    lock.lock()
    defer { lock.unlock() }
    return transactionBase ?? (storage.snapshot, version)
  }

  /// Entered with the lock held; returns with it released.
  private func enqueueLocked(_ change: ArrayChangeSet<Element>) {
    guard !isSending else {
      outbox.append(change)
      hasOutbox = true
      return lock.unlock()
    }
    // Nobody is sending, so the outbox is empty: hand this change set over directly.
    isSending = true
    lock.unlock()
    changes.send(change)
    var last = change.version
    // The sending thread hands the change sets over one at a time, in order; changes made
    // meanwhile (by its observers, or on other threads) joined the outbox behind this one.
    while true {
      lock.lock()
      guard hasOutbox else {
        isSending = false
        lock.unlock()
        return letGoOfDelivered(last)
      }
      let next = outbox.removeFirst()
      hasOutbox = !outbox.isEmpty
      lock.unlock()
      last = next.version
      changes.send(next)
    }
  }

  /// Lets the copy of the last change set that `changes` keeps go of its elements, once it is
  /// handed over: `changes` keeps it only for later registrations' `.initial`, which
  /// ``startingPoint(from:)`` serves from the array itself. Without this, that copy would share
  /// the storage and make every edit copy it. Rounds still to deliver the change set hold their
  /// own copy, which keeps its elements (and keeps the storage shared until they are done).
  private func letGoOfDelivered(_ version: UInt) {
    // Inside a transaction, `changes`' round runs at its end from the value it keeps.
    guard !ObservationContext.current.isInTransaction else { return }
    let released: ArrayChangeSet<Element>? = changes.lock.withLock {
      guard changes.storage.version == version, !changes.storage.isUnpinned else { return nil }
      let held = changes.storage
      changes.storage = held.unpinned(noElements)
      return held
    }
    // Released after unlocking: it may hold the last reference to elements (user code).
    withExtendedLifetime(released) {}
  }
}

// Every mutable property is guarded by `lock`; `changes` and `noElements` are `let`s, Sendable
// when `Element` is. Element snapshots handed to other threads never change (see `ArraySnapshot`).
extension ReadOnlyObservableArray: @unchecked Sendable where Element: Sendable {}

/// The whole-array view that ``ReadOnlyObservableArray/asObservable()`` returns; it owns its
/// registration on the change sets.
final class ArrayView<Element>: ReadOnlyObservable<[Element]> {
  private let upstream: ObservationToken
  /// The array, kept alive: a derived one ends its own registrations when it goes.
  private let array: AnyObject

  init(upstream: ObservationToken, array: AnyObject) {
    self.upstream = upstream
    self.array = array
    super.init(initialValue: [])
  }

  /// Nobody owns the view but its users, so a registration on it keeps it alive while it lasts.
  override var keptAliveByRegistrations: AnyObject? { self }
}

// Its state lives in `ReadOnlyObservable`, guarded by its lock; `upstream` and `array` are
// `let`s, only held to keep the registration and the array alive.
extension ArrayView: @unchecked Sendable where Element: Sendable {}

/// Where one registration on an array's change sets starts: set by its `.initial` call (see
/// ``ReadOnlyObservableArray/startingPoint(from:)``), read by its later calls, which the core
/// makes one at a time.
final class RegistrationStart<Element> {
  private weak var array: ReadOnlyObservableArray<Element>?
  /// The version the `.initial` elements include; later change sets up to it are skipped.
  private var version: UInt = 0

  init(array: ReadOnlyObservableArray<Element>) {
    self.array = array
  }

  /// The change set to deliver for `change` received with `option`: for `.initial`, one that
  /// inserts every element the registration starts from; for `.new`, `change` itself, or `nil`
  /// when the `.initial` elements already include it.
  func filter(
    _ change: ArrayChangeSet<Element>, _ option: ObservableOptions
  ) -> ArrayChangeSet<Element>? {
    guard option == .initial else { return change.version > version ? change : nil }
    let (elements, version) =
      array?.startingPoint(from: change) ?? (change.elements, change.version)
    self.version = version
    return .inserting(elements)
  }
}

/// A transaction's record of an array it changed: the merged change set is delivered when the
/// transaction ends.
private final class ArrayTransaction<Element>: TransactionParticipant {
  let array: ReadOnlyObservableArray<Element>

  init(array: ReadOnlyObservableArray<Element>) {
    self.array = array
  }

  func commitTransaction() {
    array.commitTransaction()
  }

  /// An array takes no turn, so its changes are never undone: they are delivered when the
  /// transaction ends.
  func undoTransaction() -> (() -> Void)? { nil }
}
