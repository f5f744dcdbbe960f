#if canImport(Darwin)
  internal import Darwin
#elseif canImport(Glibc)
  internal import Glibc
#elseif canImport(Musl)
  internal import Musl
#elseif canImport(Bionic)
  internal import Bionic
#else
  #error("PropertyObservationTesting needs os_unfair_lock or pthread_mutex_t on this platform.")
#endif

/// The recorder's lock: `os_unfair_lock` on Apple platforms, `pthread_mutex_t` elsewhere.
///
/// The library's own lock is internal to its module, so the testing module has this small twin.
/// Not recursive: the recorder never calls user code while holding it.
final class RecorderLock: @unchecked Sendable {
  #if canImport(Darwin)
    private typealias Primitive = os_unfair_lock
  #else
    private typealias Primitive = pthread_mutex_t
  #endif

  private let primitive: UnsafeMutablePointer<Primitive>

  init() {
    primitive = .allocate(capacity: 1)
    #if canImport(Darwin)
      primitive.initialize(to: os_unfair_lock())
    #else
      primitive.initialize(to: pthread_mutex_t())
      let status = pthread_mutex_init(primitive, nil)
      precondition(status == 0, "pthread_mutex_init failed with \(status)")
    #endif
  }

  deinit {
    #if !canImport(Darwin)
      pthread_mutex_destroy(primitive)
    #endif
    primitive.deinitialize(count: 1)
    primitive.deallocate()
  }

  func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    #if canImport(Darwin)
      os_unfair_lock_lock(primitive)
      defer { os_unfair_lock_unlock(primitive) }
    #else
      pthread_mutex_lock(primitive)
      defer { pthread_mutex_unlock(primitive) }
    #endif
    return try body()
  }
}
