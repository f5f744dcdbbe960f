#if canImport(Darwin)
  internal import Darwin
#elseif canImport(Glibc)
  internal import Glibc
#elseif canImport(Musl)
  internal import Musl
#elseif canImport(Bionic)
  internal import Bionic
#endif

// Memory that every observable, registration or list growth allocates, from `malloc`:
// `UnsafeMutablePointer.allocate(capacity:)` passes the runtime no alignment, which sends it
// down its aligned path (`posix_memalign` on Linux), dearer than `malloc`. `malloc`'s alignment
// (16) covers every type allocated this way, which the precondition checks.
extension UnsafeMutablePointer {
  /// Uninitialized memory for `count` values of `Pointee`; free it with ``freeMallocated()``.
  static func mallocate(capacity count: Int) -> UnsafeMutablePointer {
    precondition(MemoryLayout<Pointee>.alignment <= 16, "malloc cannot align \(Pointee.self)")
    guard let memory = malloc(Swift.max(1, count) * MemoryLayout<Pointee>.stride) else {
      preconditionFailure("out of memory")
    }
    return memory.bindMemory(to: Pointee.self, capacity: count)
  }

  /// Frees memory from ``mallocate(capacity:)``, whose values must be deinitialized.
  func freeMallocated() {
    free(self)
  }
}
