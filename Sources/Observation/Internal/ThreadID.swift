#if canImport(Darwin)
  internal import Darwin
#elseif canImport(Glibc)
  internal import Glibc
#elseif canImport(Musl)
  internal import Musl
#elseif canImport(Bionic)
  internal import Bionic
#endif

/// The identity of a thread, compared to tell the delivering thread from the others.
///
/// Built from `pthread_self()`, whose value is unique among running threads; the raw number also
/// lets the delivery state's tests name threads without starting any.
struct ThreadID: Hashable, CustomStringConvertible {
  private let raw: UInt

  init(raw: UInt) {
    self.raw = raw
  }

  /// Lets another thread run before the calling thread goes on: a waiting setter checking back
  /// gives the deliverer its core.
  static func yieldProcessor() {
    sched_yield()
  }

  static var current: ThreadID {
    #if canImport(Darwin)
      ThreadID(raw: UInt(bitPattern: pthread_self()))
    #else
      ThreadID(raw: UInt(pthread_self()))
    #endif
  }

  var description: String { "thread \(raw)" }
}
