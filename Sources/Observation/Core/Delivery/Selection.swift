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

/// What a removal compares to decide whether it ends one registration: the registration's kind
/// bits and identity (see ``ObserverEntry``), and the identity of its owner.
///
/// A main-actor call waiting in a lane carries the key of its registration, so that a removal
/// made on the main actor while another thread delivers can drop it at once (see
/// ``ReadOnlyObservable/hasEnded(_:)``).
struct RegistrationKey {
  let kindBits: UInt
  let identity: UInt
  /// The owner's identity, 0 for a token (which has none).
  let owner: UInt

  /// Whether a removal of `selection` ends the registration of kind `kind` and identity
  /// `identity`. Owner selections never match token or handle identities, so a dead owner's entry
  /// whose address a new token reuses is never mistaken for the token's.
  ///
  /// - Parameters:
  ///   - kind: The registration's kind bits.
  ///   - identity: The identity its word holds.
  ///   - owner: The owner's identity, asked only when the selection needs it (a handle entry's
  ///     word holds its handle, not its owner).
  ///   - selection: What the removal names.
  /// - Returns: Whether the removal ends the registration.
  @inline(__always)
  static func isSelected(
    kindBits kind: UInt,
    identity: UInt,
    owner: () -> UInt?,
    by selection: Selection
  ) -> Bool {
    switch selection {
    case .handle(let selected):
      return kind >= ObserverEntry<Void>.handleKind && identity == selected
    case .replaceable(let selected):
      return kind == ObserverEntry<Void>.replaceableKind && identity == selected
    case .owner(let selected):
      if kind == ObserverEntry<Void>.tokenKind { return false }
      if kind != ObserverEntry<Void>.handleKind { return identity == selected }
      return owner() == selected
    }
  }

  /// Whether a removal of `selection` ends this registration.
  ///
  /// - Parameter selection: What the removal names.
  /// - Returns: Whether the removal ends the registration.
  func isSelected(by selection: Selection) -> Bool {
    Self.isSelected(kindBits: kindBits, identity: identity, owner: { owner }, by: selection)
  }
}

extension RegistrationKey {
  private typealias Entry = ObserverEntry<Void>

  /// An `addObserver` registration of `owner`.
  static func replaceable(ownedBy owner: AnyObject) -> Self {
    let identity = Entry.identity(of: owner)
    return Self(kindBits: Entry.replaceableKind, identity: identity, owner: identity)
  }

  /// An `observe(with:)` registration of `owner`.
  static func owned(by owner: AnyObject) -> Self {
    let identity = Entry.identity(of: owner)
    return Self(kindBits: Entry.ownedKind, identity: identity, owner: identity)
  }

  /// A binding's registration: removed through `handle`, owned by `owner`.
  static func handle(_ handle: AnyObject, ownedBy owner: AnyObject) -> Self {
    Self(
      kindBits: Entry.handleKind, identity: Entry.identity(of: handle),
      owner: Entry.identity(of: owner))
  }

  /// A token's registration, which no selection names: cancelling the token releases what its
  /// waiting calls run, so they find nothing to call.
  static var token: Self {
    Self(kindBits: Entry.tokenKind, identity: 0, owner: 0)
  }
}
