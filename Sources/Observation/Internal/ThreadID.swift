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

  /// Stands for the library's delivery queue while it is handed the role and before its job
  /// runs on some thread. No thread has it.
  static var deliveryQueue: ThreadID { ThreadID(raw: 0) }

  /// Marks a change whose setter stopped waiting for its turn: whoever holds the role delivers
  /// it. No thread has it.
  static var anyDeliverer: ThreadID { ThreadID(raw: 1) }

  var description: String {
    switch self {
    case .deliveryQueue: "the delivery queue"
    case .anyDeliverer: "any deliverer"
    default: "thread \(raw)"
    }
  }
}
