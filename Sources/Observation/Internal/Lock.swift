#if canImport(Darwin)
  internal import Darwin
#elseif os(Linux) || os(Android)
  internal import PropertyObservationAtomics
#else
  #error("PropertyObservation needs os_unfair_lock or a futex on this platform.")
#endif

/// The one lock of the library: `os_unfair_lock` on Apple platforms, a futex word elsewhere
/// (`po_lock`, 4 bytes: see PropertyObservationAtomics).
///
/// It is a plain pointer so that it can live inside the types that use it without another object.
/// A lock made by ``init()`` has memory of its own, which its owner frees with ``deallocate()``
/// exactly once, from `deinit`; an observable's lock points into the observable itself (see
/// ``InlineLock``). Neither needs tearing down. It is not recursive: code that holds it never
/// calls user code, so nothing can re-enter it on the same thread.
///
/// It is `package` so that PropertyObservationTesting locks with it instead of keeping a copy.
///
/// `@unchecked Sendable`: it is the lock; its one stored property, the pointer to the primitive,
/// is immutable, and the primitive is only touched through the platform's locking calls.
package struct Lock: @unchecked Sendable {
  private let primitive: UnsafeMutablePointer<LockPrimitive>

  /// Makes a lock of its own, from `malloc` (see `mallocate(capacity:)`); the owner calls
  /// ``deallocate()``.
  package init() {
    primitive = .mallocate(capacity: 1)
    primitive.initialize(to: InlineLock().primitive)
  }

  /// The lock stored inline at `primitive` (see ``InlineLock``), which its owner's memory
  /// holds: nobody calls ``deallocate()`` on it.
  init(inlineAt primitive: UnsafeMutablePointer<LockPrimitive>) {
    self.primitive = primitive
  }

  package func deallocate() {
    primitive.freeMallocated()
  }

  package func lock() {
    #if canImport(Darwin)
      os_unfair_lock_lock(primitive)
    #else
      po_lock_lock(primitive)
    #endif
    #if DEBUG
      HeldLocks.count += 1
    #endif
  }

  package func unlock() {
    #if DEBUG
      HeldLocks.count -= 1
    #endif
    #if canImport(Darwin)
      os_unfair_lock_unlock(primitive)
    #else
      po_lock_unlock(primitive)
    #endif
  }

  /// In debug builds, stops the program if the calling thread holds any of the library's locks:
  /// called before user code runs and before user objects are released, whose deinit is user
  /// code that may re-enter the library. Free in release builds.
  @inline(__always)
  static func assertNotHeld(_ what: StaticString = "User code ran", line: UInt = #line) {
    #if DEBUG
      precondition(HeldLocks.count == 0, "\(what) with a lock held (line \(line)).")
    #endif
  }

  package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

#if canImport(Darwin)
  typealias LockPrimitive = os_unfair_lock
#else
  typealias LockPrimitive = po_lock
#endif

/// The bytes of a ``Lock`` kept inside an object instead of in memory of their own, which saves
/// every observable a `malloc` and a `free` (most observables in an app are never observed, so
/// their cost is mostly making and freeing them).
///
/// A lock must not move while it is used, and Swift gives no stable address to a stored property
/// as such. The object's memory does not move, though: an object that keeps an `InlineLock` as
/// its **first** stored property (of its root class) finds it at
/// `_getUnsafePointerToStoredProperties(self)`, the way swift-atomics' `ManagedAtomic` finds its
/// storage, and locks it only through that pointer (``Lock/init(inlineAt:)``). Both primitives
/// are plain words that need no tearing down, so `deinit` has nothing to do for it.
struct InlineLock {
  fileprivate var primitive: LockPrimitive

  init() {
    #if canImport(Darwin)
      primitive = os_unfair_lock()
    #else
      primitive = po_lock()
    #endif
  }
}

#if DEBUG
  /// How many of the library's locks the calling thread holds.
  private enum HeldLocks {
    static let slot = ThreadLocal()

    static var count: Int {
      get { Int(bitPattern: slot.value) }
      set { slot.value = UnsafeMutableRawPointer(bitPattern: newValue) }
    }
  }
#endif
