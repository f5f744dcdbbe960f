/// A registration with `.initial`, whose entry joins the list only after `.initial` has
/// returned on its registering thread (or a registration queued behind such a one, open from the
/// start). Every property is guarded by the observable's lock; once all gates of its segment are
/// open, only the deliverer reads it.
final class RegistrationGate<Value> {
  private(set) var entry: ObserverEntry<Value>
  var isOpen: Bool
  private(set) var isCancelled = false
  /// The first round of its segment's backlog that it missed (the ones before it were made
  /// before it registered).
  var firstRound = 0

  init(entry: ObserverEntry<Value>, isOpen: Bool = false) {
    self.entry = entry
    self.isOpen = isOpen
  }

  /// Cancels the gate and moves its closure to `released`, leaving `vacant`, so that what it
  /// captured is released at once. A catch-up that may be calling it holds its own copy.
  func cancel(
    released: inout [(Value, ObservableOptions) -> Void],
    leaving vacant: @escaping (Value, ObservableOptions) -> Void
  ) {
    guard !isCancelled else { return }
    isCancelled = true
    entry.markRemoved()
    released.append(entry.takeCallback(leaving: vacant))
  }

  /// The entry's closure, leaving `vacant` (see ``ObserverEntry/takeCallback(leaving:)``).
  func takeCallback(
    leaving vacant: @escaping (Value, ObservableOptions) -> Void
  ) -> (Value, ObservableOptions) -> Void {
    entry.takeCallback(leaving: vacant)
  }
}
