import Foundation

/// Runs `work` on a thread of its own and waits for its result without holding a thread.
///
/// Swift Testing runs tests as tasks on a pool of as many threads as there are cores (two here).
/// A test that computes for seconds (a model test of a thousand scripts) would hold one of them
/// all along, and tests that await deliveries would starve behind it.
package func offThePool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result
{
  await withCheckedContinuation { continuation in
    Thread.detachNewThread { continuation.resume(returning: work()) }
  }
}
