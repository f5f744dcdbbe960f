/// A fixed set of locks shared by many small objects, picked by address, so that an object with
/// one rarely written field (a token's source) needs no lock of its own.
///
/// Two objects may share a stripe; a stripe is held only for a load or a store, never while
/// calling out, so sharing costs at most a short wait.
enum LockStripes {
  private static let locks: [Lock] = (0..<64).map { _ in Lock() }

  static func lock(for object: AnyObject) -> Lock {
    locks[index(for: object)]
  }

  private static let nextStripeLock = Lock()
  nonisolated(unsafe) private static var nextStripe = 0

  /// A stripe for a new object that keeps its own: handed out in turn, so that objects made one
  /// after another (the graphs of a model's observables) get different locks.
  static func nextIndex() -> Int {
    nextStripeLock.withLock {
      nextStripe = (nextStripe + 1) & 63
      return nextStripe
    }
  }

  /// The lock of stripe `index`.
  static func lock(at index: Int) -> Lock {
    locks[index]
  }

  /// The stripe of `object`: two objects with the same index share a lock.
  static func index(for object: AnyObject) -> Int {
    // Objects are at least 16-byte aligned: skip the bits that are always zero.
    let address = UInt(bitPattern: ObjectIdentifier(object))
    return Int((address >> 4) & 63)
  }
}
