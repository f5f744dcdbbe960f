#if canImport(Darwin)
  internal import Darwin
#elseif canImport(Glibc)
  internal import Glibc
#elseif canImport(Musl)
  internal import Musl
#elseif canImport(Bionic)
  internal import Bionic
#endif

/// One pointer-sized slot per thread: the library's only thread-local storage. The debug count
/// of held locks and each thread's `ObservationContext` live in one each.
///
/// A thin wrapper over `pthread_key_t`, made once per slot (a `static let`) and never deleted.
///
/// `@unchecked Sendable` without a lock: the key is immutable after `init`, and each thread
/// reads and writes only its own value of the slot.
struct ThreadLocal: @unchecked Sendable {
  #if canImport(Darwin)
    typealias Destructor = @convention(c) (UnsafeMutableRawPointer) -> Void
  #else
    typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void
  #endif

  // Written once, in `init`; each thread reads and writes only its own value of the slot.
  private let key: pthread_key_t

  /// - Parameter destructor: Called with a thread's non-nil value when that thread exits.
  init(destructor: Destructor? = nil) {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, destructor)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    self.key = key
  }

  /// The calling thread's value; `nil` until it sets one.
  var value: UnsafeMutableRawPointer? {
    get { pthread_getspecific(key) }
    nonmutating set { pthread_setspecific(key, newValue) }
  }
}
