// Not final only for the library's `DerivedLink`, a token that is also its registration's
// closure context (it cannot be subclassed outside the module); every member is final.
/// Owns a registration made with ``ReadOnlyObservable/observe(options:isolation:_:)``: the registration
/// ends when the token is cancelled or released.
///
/// Keep the token as long as you want callbacks, typically in a property or an
/// ``ObservationBag``:
///
/// ```swift
/// final class ScoreLogger {
///   private var token: ObservationToken?
///
///   init(score: Observable<Int>) {
///     token = score.observe { score, _ in print("score: \(score)") }
///   }
/// }
/// ```
///
/// A token keeps the observable it observes alive, so a chain built inline
/// (`model.score.map { "\($0)" }.observe { ... }`) lives exactly as long as its token.
///
/// > Important: Cancelling from a callback stops the registration for the rest of the current
/// > round; cancelling from another thread while a round is running stops it before the next
/// > round, so a callback of the round in progress may still run, but no later one.
public class ObservationToken {
  /// What the registration lives in; `nil` once cancelled, so that cancelling also lets go of
  /// the observable (and of an inline chain) at once. Guarded by the token's lock stripe.
  private var source: (any RegistrationRemoving)?
  /// Where the token's entry is in its observable's list, so cancelling finds it in O(1).
  /// Written and read only under that observable's lock (see `setSlotHint(_:forIdentity:)`).
  private var slotHint = -1

  init(source: any RegistrationRemoving) {
    self.source = source
  }

  /// The object the registration lives in (its observable), or `nil` once cancelled.
  final var observed: AnyObject? {
    let lock = LockStripes.lock(for: self)
    lock.lock()
    defer { lock.unlock() }
    return source
  }

  /// The token's slot, read by its observable under its lock.
  final var slot: Int { slotHint }

  /// Records that the token whose address is `identity` has its entry at `slot`. Called by the
  /// observable's list, under its lock, for a token entry it appends or moves: such an entry is
  /// not removed yet, so its token is still alive (a token removes its entry, or has the removal
  /// applied, before anything can move the list again).
  static func setSlotHint(_ slot: Int, forIdentity identity: UInt) {
    guard let address = UnsafeRawPointer(bitPattern: identity) else { return }
    Unmanaged<ObservationToken>.fromOpaque(address).takeUnretainedValue().slotHint = slot
  }

  deinit {
    // No other reference exists, so no lock is needed to read `source`.
    source?.removeRegistration(identifiedBy: self)
  }

  /// Ends the registration now and releases the observable the token kept alive.
  ///
  /// Calling it again, or after the observable is gone, does nothing.
  public final func cancel() {
    let lock = LockStripes.lock(for: self)
    lock.lock()
    let source = self.source
    self.source = nil
    lock.unlock()
    source?.removeRegistration(identifiedBy: self)
  }

  /// Keeps the token in `bag`, which cancels it when the bag is emptied or released.
  ///
  /// - Parameter bag: The bag that takes ownership of the token.
  public final func store(in bag: ObservationBag) {
    bag.insert(self)
  }

  /// Keeps the token in `set`, in the style of Combine's `AnyCancellable`.
  ///
  /// - Parameter set: The set that takes ownership of the token.
  public final func store(in set: inout Set<ObservationToken>) {
    set.insert(self)
  }
}

// `source` is guarded by the token's lock stripe (see `LockStripes`); `slotHint` by the lock of
// the observable whose list holds the token's entry (its `ObserverList` writes it, its `remove`
// reads it). Ending a registration goes through the source's own lock.
extension ObservationToken: @unchecked Sendable {}

extension ObservationToken: Hashable {
  /// Tokens are equal only to themselves.
  public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool {
    lhs === rhs
  }

  /// Hashes the token's identity.
  ///
  /// - Parameter hasher: The hasher to feed.
  public final func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }
}

/// What a handle (a token, a binding) ends when it is cancelled or released.
protocol RegistrationRemoving: AnyObject {
  /// Ends the registration that `handle` identifies.
  func removeRegistration(identifiedBy handle: AnyObject)
}

extension ReadOnlyObservable: RegistrationRemoving {
  func removeRegistration(identifiedBy handle: AnyObject) {
    remove(.handle(Entry.identity(of: handle)), token: handle as? ObservationToken)
  }
}
