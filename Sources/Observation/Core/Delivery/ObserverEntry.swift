/// One registration in an ``Observable``'s list.
///
/// The entry is as small as the plainest weak-owner design (a weak owner, an options word and a
/// closure: 32 bytes on 64-bit platforms), because the list lives in every observable of an app.
/// The options word also carries the owner's identity: object addresses are at least 8-byte
/// aligned, so the low three bits are free for the `.old` and `.new` bits and the token flag.
/// Comparing identities this way lets `removeObserver(_:)` and `removeIfExists` scan the list
/// without a weak load per entry.
struct ObserverEntry<Value> {
  /// The owner, or `nil` for a token registration, whose token removes the entry in its deinit
  /// and so needs no weak load per delivery.
  weak var owner: AnyObject?
  private var word: UInt
  /// `nil` once the entry is removed and its closure handed back to be released outside the
  /// lock; a removed entry is never called.
  private(set) var callback: ((Value, ObservableOptions) -> Void)?

  // The delivery loop runs unspecialized (generic over `Value`), where the optimizer would
  // otherwise leave these one-instruction accessors as calls that each need type metadata.
  @inline(__always) static var oldBit: UInt { 1 }
  @inline(__always) static var newBit: UInt { 2 }
  @inline(__always) private static var tokenBit: UInt { 4 }
  @inline(__always) private static var flagMask: UInt { 7 }

  /// An entry owned weakly by `owner`.
  @inline(__always)
  init(
    owner: AnyObject,
    options: ObservableOptions,
    callback: @escaping (Value, ObservableOptions) -> Void
  ) {
    self.owner = owner
    self.word = Self.identity(of: owner) | Self.bits(for: options)
    self.callback = callback
  }

  /// An entry owned by `token`, which must remove it before it is deallocated.
  @inline(__always)
  init(
    token: AnyObject,
    options: ObservableOptions,
    callback: @escaping (Value, ObservableOptions) -> Void
  ) {
    self.owner = nil
    self.word = Self.identity(of: token) | Self.bits(for: options) | Self.tokenBit
    self.callback = callback
  }

  @inline(__always)
  static func identity(of object: AnyObject) -> UInt {
    UInt(bitPattern: ObjectIdentifier(object)) & ~flagMask
  }

  @inline(__always)
  private static func bits(for options: ObservableOptions) -> UInt {
    (options.contains(.old) ? oldBit : 0) | (options.contains(.new) ? newBit : 0)
  }

  @inline(__always) var identity: UInt { word & ~Self.flagMask }
  @inline(__always) var isToken: Bool { word & Self.tokenBit != 0 }
  @inline(__always) var isRemoved: Bool { word & (Self.oldBit | Self.newBit) == 0 }
  @inline(__always) var wantsOld: Bool { word & Self.oldBit != 0 }

  @inline(__always) func wants(_ bit: UInt) -> Bool { word & bit != 0 }

  /// Clears the delivery bits, so the entry is skipped for the rest of a round and pruned after.
  mutating func markRemoved() {
    word &= ~(Self.oldBit | Self.newBit)
  }

  /// Takes the closure out of a removed entry, so that its owner can release it (and whatever it
  /// captured, whose deinit is user code) after unlocking. Only safe while no round runs, or for
  /// an entry the round has passed: a round may be executing this very closure.
  mutating func takeCallback() -> ((Value, ObservableOptions) -> Void)? {
    defer { callback = nil }
    return callback
  }

  /// Whether `token` owns this entry. Only token entries are compared, so a dead owner's entry
  /// whose address a new token reuses is never mistaken for the token's.
  @inline(__always)
  func isOwned(byToken identity: UInt) -> Bool {
    word & ~(Self.oldBit | Self.newBit) == identity | Self.tokenBit
  }

  /// Whether this is an owner entry of the owner with `identity` (token entries never match).
  @inline(__always)
  func isOwned(byOwner identity: UInt) -> Bool {
    word & ~(Self.oldBit | Self.newBit) == identity
  }

  /// Whether the entry can still be called: not removed, and a token entry or a living owner.
  /// This costs a weak load for owner entries, so the delivery loop does not use it.
  var isLive: Bool {
    !isRemoved && (isToken || owner != nil)
  }
}
