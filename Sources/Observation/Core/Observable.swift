/// A thread-safe box around a value that tells its observers about every change, in order.
///
/// Observers register with an owner object that the observable holds weakly; when the owner is
/// deallocated its callbacks stop at once and its registration is pruned on a later change, with
/// no call to ``ReadOnlyObservable/removeObserver(_:)`` needed:
///
/// ```swift
/// final class User {
///   let name = Observable("Madeline")
/// }
///
/// let user = User()
/// user.name.addObserver(self, options: [.initial, .new]) { name, _ in
///   print("User's name is \(name)")
/// }
/// user.name.value = "Amelia"
/// ```
///
/// Code without an owner object uses ``ReadOnlyObservable/observe(options:isolation:_:)``, which returns an
/// ``ObservationToken`` that owns the registration.
///
/// An observable that nobody has observed holds only its value and a lock, so a model with many
/// observable properties costs little more than its values; the first registration makes what
/// delivery needs, and the observable keeps it from then on.
///
/// ## Ordering
///
/// Each set of ``value`` runs one *round*: every ``ObservableOptions/old`` callback with the
/// previous value, in registration order, then every ``ObservableOptions/new`` callback with the
/// new value, in registration order. Rounds never overlap:
///
/// - A set made inside a callback is queued and delivered after the current round ends, on the
///   same thread, before the outermost set returns. Every observer sees every change in the order
///   the changes were made, and never an older value after a newer one.
/// - A set made on another thread while a propagation of this observable's graph runs (its
///   round, the rounds its callbacks cause, the derived values it recomputes) waits until that
///   propagation has ended, then stores the value and delivers its round itself: propagations of
///   a graph never interleave, and waiting setters take turns in arrival order. A set that could
///   only wait for a thread that waits for it is queued whole behind the running propagation
///   instead (see <doc:Threading>).
/// - ``ObservableOptions/initial`` is delivered synchronously inside the registering call, with
///   the value current at registration, before any change reaches the new observer.
/// - An observer registered during a round is not called for that round; one removed, or whose
///   owner dies, during a round on the delivering thread is not called for the rest of it.
///   Removal from another thread takes effect at the next round boundary.
///
/// > Important: A nonisolated callback runs on the thread whose propagation made the change:
/// > the thread that set the value, or, for a set queued because it could not wait, the thread
/// > that ran the propagation it waited for. A `@MainActor` callback runs on the main queue and
/// > an actor's on that actor, in the order of propagations, across observables too (one
/// > mailbox per isolation, see <doc:Threading>). No lock is held
/// > while a callback runs, so callbacks may read and set ``value`` and add or remove observers,
/// > themselves included.
///
/// ## Sendable
///
/// `Observable` is `Sendable` when `Value` is: all of its state is guarded by one internal
/// lock. Nonisolated callbacks are not required to be `@Sendable` (they run on the delivering
/// thread; see above), so capture state that is safe to use from the threads that set the value.
public final class Observable<Value>: ReadOnlyObservable<Value> {
  /// Creates an observable holding `value`.
  ///
  /// - Parameter value: The initial value.
  public init(_ value: Value) {
    super.init(initialValue: value)
  }

  /// The current value; setting it notifies the observers.
  ///
  /// Reading returns the latest value set, from any thread, even while an earlier change is still
  /// being delivered. Setting stores the value and runs a round (see the ordering rules above).
  /// Every set notifies, also when the new value equals the old one; chain
  /// `removeDuplicates()` to skip repeats.
  ///
  /// > Note: `observable.value += 1` is a read followed by a set, not one atomic step. Use
  /// > ``update(_:)`` when several threads modify the same value.
  public override var value: Value {
    get { super.value }
    set { send(newValue) }
  }

  /// Atomically modifies the value in place, then notifies once.
  ///
  /// `body` runs on a copy without any lock held, so it may read this or any other observable.
  /// If another thread sets the value while `body` runs, the result is discarded and `body`
  /// runs again on the newer value; keep it free of side effects.
  ///
  /// ```swift
  /// counter.update { $0 += 1 }
  /// ```
  ///
  /// - Parameter body: Modifies the value in place. Errors it throws propagate, and the value is
  ///   then left unchanged.
  public func update(_ body: (inout Value) throws -> Void) rethrows {
    try sendUpdate(body)
  }
}

// All state lives in `ReadOnlyObservable`, guarded by its lock.
extension Observable: @unchecked Sendable where Value: Sendable {}
