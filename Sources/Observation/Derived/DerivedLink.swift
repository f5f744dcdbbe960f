/// The connection from a source's registration to a derived observable that has that one
/// source and is computed inline, inside the source's round (``ReadOnlyObservable/map(_:)``,
/// ``ReadOnlyObservable/removeDuplicates(by:)``, the filters).
///
/// Such an operator needs no queue and no scheduling: its only input is final as soon as the
/// source's round reaches its registration, and the core calls a registration one call at a
/// time, `.initial` first, so its transform is never called concurrently with itself. The link
/// only bridges the moment the derived observable is built: the `.initial` value, and any change
/// that a round on another thread delivers before ``attach(rank:upstream:)``, wait in `pending`,
/// and the newest of them seeds the derived observable. After that, each value is sent on at
/// once, on the delivering thread.
///
/// The link holds the derived observable weakly (the derived observable owns the registration
/// whose closure holds the link): once the derived observable is gone, values are dropped.
final class DerivedLink<Value> {
  private let lock = Lock()
  // Guarded by `lock`.
  private weak var target: DerivedObservable<Value>?
  private var isAttached = false
  private var pending: Value?

  deinit {
    lock.deallocate()
  }

  /// Sends `value` to the derived observable, or keeps it as the seed until it is attached.
  func publish(_ value: Value) {
    lock.lock()
    guard isAttached else { return holdUntilAttached(value) }
    let target = target
    lock.unlock()
    target?.send(value)
  }

  /// Entered with the lock held; returns with it released.
  @inline(never)
  private func holdUntilAttached(_ value: Value) {
    // The value it replaces is released after unlocking: its deinit may be user code.
    let replaced = pending
    pending = value
    lock.unlock()
    withExtendedLifetime(replaced) {}
  }

  /// Builds the derived observable from the newest value received so far and sends every later
  /// value to it.
  ///
  /// - Parameters:
  ///   - rank: 1 + the source's rank.
  ///   - upstream: The registration that feeds this link; the derived observable owns it.
  /// - Returns: The derived observable.
  func attach(rank: Int, upstream: ObservationToken) -> DerivedObservable<Value> {
    lock.lock()
    guard let seed = pending else {
      lock.unlock()
      preconditionFailure("a source did not deliver .initial inside its registering call")
    }
    pending = nil
    let derived = DerivedObservable(seed: seed, rank: rank, upstream: [upstream])
    target = derived
    isAttached = true
    lock.unlock()
    return derived
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
