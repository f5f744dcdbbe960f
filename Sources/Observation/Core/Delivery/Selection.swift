/// Which registrations a removal ends.
enum Selection: Equatable {
  /// The one registration of a token or a binding handle with this identity.
  case handle(UInt)
  /// Every registration of the owner with this identity (``ReadOnlyObservable/removeObserver(_:)``).
  case owner(UInt)
  /// The owner's `addObserver` registrations, which `removeIfExists` replaces.
  case replaceable(UInt)

  /// Whether at most one registration can match, so a scan can stop at the first.
  var isUnique: Bool {
    if case .handle = self { return true }
    return false
  }
}
