import Foundation

/// A value that callbacks on any thread may read and change: every access takes the lock. The
/// registrations of the library take `@Sendable` closures, so a test that counts or collects in
/// a nonisolated callback keeps its state here rather than in a captured `var`.
package final class LockedValue<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value

  package init(_ value: Value) {
    stored = value
  }

  /// The value now.
  package var value: Value {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }

  /// Runs `body` on the value under the lock.
  @discardableResult
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try lock.withLock { try body(&stored) }
  }
}

/// A value with no lock at all, for the tests that check that the library never runs two calls
/// at once: if it did, ThreadSanitizer would report the accesses to it (and the tests' own
/// flags would catch the overlap without the sanitizer). `@unchecked Sendable` on purpose:
/// nothing but the library's one-call-at-a-time rule guards it.
package final class Unsynchronized<Value>: @unchecked Sendable {
  package var value: Value

  package init(_ value: Value) {
    self.value = value
  }
}
