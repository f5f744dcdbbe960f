/// One registration in an ``Observable``'s list.
///
/// The entry is as small as the plainest weak-owner design (a weak owner, an options word and a
/// closure: 32 bytes on 64-bit platforms), because the list lives in every observable of an app.
/// The options word also carries the registration's identity and kind: Swift objects are at least
/// 16-byte aligned, so the low four bits of an address are free for the `.old` and `.new` bits and
/// two kind bits. Comparing identities this way lets removals scan the list without a weak load
/// per entry.
///
/// The kinds:
/// - ``Kind/replaceable``: `addObserver`, identified by its owner; `removeIfExists` replaces it.
/// - ``Kind/owned``: `observe(with:)`, identified by its owner; only `removeObserver` ends it.
/// - ``Kind/handle``: identified by a handle object (a binding) that the entry's closure keeps
///   alive, so its address cannot be reused while the entry exists; owned weakly by its owner.
/// - ``Kind/token``: identified by its token, which removes it before it is deallocated; no owner,
///   so no weak load per delivery.
struct ObserverEntry<Value> {
  enum Kind: UInt {
    case replaceable = 0
    case owned = 4
    case handle = 8
    case token = 12
  }

  /// The owner; `nil` for a token entry.
  weak var owner: AnyObject?
  fileprivate var word: UInt
  /// Replaced by a closure that does nothing once the entry is removed and its closure handed
  /// back to be released outside the lock; a removed entry is never called. Not optional: the
  /// delivery loop calls it unspecialized, where unwrapping an optional function would need a
  /// reabstraction thunk, allocated on every call.
  private(set) var callback: (Value, ObservableOptions) -> Void

  // The delivery loop runs unspecialized (generic over `Value`), where the optimizer would
  // otherwise leave these one-instruction accessors as calls that each need type metadata.
  @inline(__always) static var oldBit: UInt { 1 }
  @inline(__always) static var newBit: UInt { 2 }
  @inline(__always) fileprivate static var kindMask: UInt { 12 }
  @inline(__always) fileprivate static var flagMask: UInt { 15 }
  // The `Kind` raw values as literals: `Kind.token.rawValue` is a call in unspecialized code (the
  // enum's raw-value getter), paid by every delivery that asks `isToken`; a literal is not.
  // `Draft.init(token:options:callback:)` asserts that they agree.
  @inline(__always) static var tokenKind: UInt { 12 }
  @inline(__always) static var replaceableKind: UInt { 0 }
  @inline(__always) static var ownedKind: UInt { 4 }
  @inline(__always) static var handleKind: UInt { 8 }
  /// The kind bits of the word, to compare with the `*Kind` literals: ``kind`` builds the
  /// generic nested enum, which costs a metadata look-up in unspecialized code.
  @inline(__always) var kindBits: UInt { word & Self.kindMask }
  /// Set in `word` for a main-actor token registration, on 64-bit platforms (0 elsewhere, where
  /// the bit could belong to an address): its `callback` is the user's main-actor closure itself,
  /// called directly by rounds that run on the main queue, and its weak `owner` slot, which
  /// tokens do not use, holds the ``MainActorHandle`` that delivers it in every other case.
  @inline(__always) static var mainActorBit: UInt { UInt(1) << 63 }

  /// The entry `draft` describes.
  init(_ draft: Draft) {
    self.owner = draft.owner?.takeUnretainedValue()
    self.word = draft.word
    self.callback = draft.callback
  }

  /// Empty storage: a slot of a list's spare capacity, removed, called by nobody.
  init(vacant callback: @escaping (Value, ObservableOptions) -> Void) {
    self.owner = nil
    self.word = 0
    self.callback = callback
  }

  /// Makes this slot hold `draft`'s registration, field by field: building an entry and copying
  /// it in goes through the entry's generic value witnesses after a metadata look-up (an entry
  /// holds a weak reference); assigning its fields needs neither.
  @inline(__always)
  mutating func fill(with draft: consuming Draft) {
    if let draftOwner = draft.owner {
      draftOwner._withUnsafeGuaranteedRef { owner = $0 }
    } else {
      owner = nil
    }
    word = draft.word
    callback = draft.callback
  }

  @inline(__always)
  static func identity(of object: AnyObject) -> UInt {
    UInt(bitPattern: ObjectIdentifier(object)) & ~flagMask
  }

  /// The identity a word holds, without its flag bits.
  @inline(__always)
  fileprivate static func identity(inWord word: UInt) -> UInt {
    word & ~(flagMask | mainActorBit)
  }

  /// Whether a word wants no pass: a removed entry, or a registration with neither option.
  @inline(__always)
  fileprivate static func isRemoved(word: UInt) -> Bool {
    word & (oldBit | newBit) == 0
  }

  @inline(__always)
  fileprivate static func bits(for options: ObservableOptions) -> UInt {
    (options.contains(.old) ? oldBit : 0) | (options.contains(.new) ? newBit : 0)
  }

  @inline(__always) var identity: UInt { Self.identity(inWord: word) }
  @inline(__always) var isMainActorToken: Bool { word & Self.mainActorBit != 0 }
  @inline(__always) var kind: Kind { Kind(rawValue: word & Self.kindMask).unsafelyUnwrapped }
  @inline(__always) var isToken: Bool { word & Self.kindMask == Self.tokenKind }
  @inline(__always) var isRemoved: Bool { Self.isRemoved(word: word) }
  @inline(__always) var wantsOld: Bool { word & Self.oldBit != 0 }

  @inline(__always) func wants(_ bit: UInt) -> Bool { word & bit != 0 }

  /// Which token entries a round may call directly, as one mask of the word: tokens, and of
  /// those the main-actor ones only in a round that runs them inline.
  struct DirectTokenTest {
    fileprivate let mask: UInt

    @inline(__always)
    init(mainActorInline: Bool) {
      mask = ObserverEntry.kindMask | (mainActorInline ? 0 : ObserverEntry.mainActorBit)
    }
  }

  /// Whether this is a token entry that wants `bit`'s pass and that `test` lets a round call
  /// directly.
  @inline(__always)
  func passes(_ test: DirectTokenTest, wanting bit: UInt) -> Bool {
    word & (bit | test.mask) == bit | Self.tokenKind
  }

  /// Whether a removal of `selection` ends this entry. Owner selections never match token or
  /// handle identities, so a dead owner's entry whose address a new token reuses is never
  /// mistaken for the token's. For an entry in a queue; see ``isSelected(_:by:)`` for one in
  /// the list.
  func isSelected(by selection: Selection) -> Bool {
    var entry = self
    return withUnsafeMutablePointer(to: &entry) { Self.isSelected($0, by: selection) }
  }

  /// Whether a removal of `selection` ends the entry at `entry`, read in place: calling a
  /// method on a list slot copied the entry through its value witnesses (a weak reference and
  /// a closure to retain, touching the owner's side table and the closure's context).
  @inline(__always)
  static func isSelected(_ entry: UnsafeMutablePointer<Self>, by selection: Selection) -> Bool {
    RegistrationKey.isSelected(
      kindBits: entry.pointee.kindBits,
      identity: entry.pointee.identity,
      // A handle entry's word holds its handle: compare the owner itself (a weak load).
      owner: { entry.pointee.owner.map(Self.identity(of:)) },
      by: selection)
  }

  /// Clears the delivery bits, so the entry is skipped for the rest of a round and pruned after.
  @inline(__always)
  mutating func markRemoved() {
    word &= ~(Self.oldBit | Self.newBit)
  }

  /// Takes the closure out of a removed entry, leaving `vacant` (its list's shared closure that
  /// does nothing: a closure literal here would allocate its context), so that its owner can
  /// release it (and whatever it captured, whose deinit is user code) after unlocking. Only safe
  /// while no round runs, or for an entry the round has passed: a round may be executing this
  /// very closure.
  ///
  /// Clears the word too, so the entry reads as vacant (``holdsCallback`` is `false`): a removed
  /// entry is never selected, called or moved again, so nothing reads its identity.
  @inline(__always)
  mutating func takeCallback(leaving vacant: @escaping (Value, ObservableOptions) -> Void)
    -> (Value, ObservableOptions) -> Void
  {
    defer {
      callback = vacant
      word = 0
    }
    return callback
  }

  /// Whether the entry holds a closure of its own: `false` for a vacant slot and for a removed
  /// entry whose closure was taken, whose word is 0. Any other entry's word holds an identity,
  /// an address, which is never 0.
  @inline(__always) var holdsCallback: Bool { word != 0 }

  /// Whether the entry can still be called: not removed, and a token entry or a living owner.
  /// This costs a weak load for owner entries, so the delivery loop does not use it.
  var isLive: Bool {
    !isRemoved && (isToken || owner != nil)
  }
}

extension ObserverEntry {
  /// A registration about to be added: what an entry holds, with an unretained owner. Unlike
  /// an entry, which holds a weak reference, a draft can be passed and copied in registers in
  /// this unspecialized code, without looking up its generic metadata.
  ///
  /// A draft lives only for the registering call, and its maker keeps the owner alive for that
  /// call: the owner is the call's own argument (`addObserver`, `observe(with:)`, a binding's
  /// target), or the main-actor handle that the returned token holds. Holding it unretained
  /// spares a retain and a release per registration; ``fill(with:)`` writes the weak reference
  /// from it without either.
  struct Draft {
    let owner: Unmanaged<AnyObject>?
    let word: UInt
    let callback: (Value, ObservableOptions) -> Void

    /// An `addObserver` (``Kind/replaceable``) or `observe(with:)` (``Kind/owned``) entry, owned
    /// weakly by `owner`.
    @inline(__always)
    init(
      owner: AnyObject,
      kind: Kind = .replaceable,
      options: ObservableOptions,
      callback: @escaping (Value, ObservableOptions) -> Void
    ) {
      self.owner = .passUnretained(owner)
      // `kind.rawValue` is a call in this unspecialized code; `kind` is a constant at each
      // call site, so this switch folds away.
      let kindBits: UInt =
        switch kind {
        case .replaceable: Entry.replaceableKind
        case .owned: Entry.ownedKind
        case .handle: Entry.handleKind
        case .token: Entry.tokenKind
        }
      self.word = Entry.identity(of: owner) | kindBits | Entry.bits(for: options)
      self.callback = callback
    }

    /// A ``Kind/handle`` entry: owned weakly by `owner`, removed through `handle`, which the
    /// callback must keep alive.
    @inline(__always)
    init(
      owner: AnyObject,
      handle: AnyObject,
      options: ObservableOptions,
      callback: @escaping (Value, ObservableOptions) -> Void
    ) {
      self.owner = .passUnretained(owner)
      self.word = Entry.identity(of: handle) | Entry.handleKind | Entry.bits(for: options)
      self.callback = callback
    }

    /// A main-actor ``Kind/token`` entry (see ``mainActorBit``), made only where the bit is not
    /// 0: `token` removes it, and `mainActorHandle` delivers it when a round cannot call it.
    @inline(__always)
    init(
      token: AnyObject,
      mainActorHandle: MainActorHandle<Value>,
      options: ObservableOptions,
      callback: @escaping (Value, ObservableOptions) -> Void
    ) {
      self.owner = .passUnretained(mainActorHandle)
      self.word =
        Entry.identity(of: token) | Entry.tokenKind | Entry.bits(for: options) | Entry.mainActorBit
      self.callback = callback
    }

    /// A ``Kind/token`` entry, which `token` must remove before it is deallocated.
    @inline(__always)
    init(
      token: AnyObject,
      options: ObservableOptions,
      callback: @escaping (Value, ObservableOptions) -> Void
    ) {
      self.owner = nil
      assert(
        Entry.tokenKind == Kind.token.rawValue && Entry.handleKind == Kind.handle.rawValue
          && Entry.replaceableKind == Kind.replaceable.rawValue
          && Entry.ownedKind == Kind.owned.rawValue,
        "The kind literals disagree with `Kind`.")
      self.word = Entry.identity(of: token) | Entry.tokenKind | Entry.bits(for: options)
      self.callback = callback
    }

    typealias Entry = ObserverEntry<Value>

    @inline(__always) var identity: UInt { Entry.identity(inWord: word) }
    @inline(__always) var isRemoved: Bool { Entry.isRemoved(word: word) }
  }
}
