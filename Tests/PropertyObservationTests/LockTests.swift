import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// The library's one lock: a futex word on Linux, `os_unfair_lock` on Apple platforms.
@Suite struct LockTests {
  /// Four threads on this machine's two cores: most acquisitions find the lock held, so the
  /// contended path (a spin, then a sleep and a wake-up) runs many times, and an increment made by
  /// two holders at once would be lost from the total.
  @Test func threadsIncrementingUnderTheLockLoseNoIncrement() async {
    let threads = 4
    let increments = 100_000
    let (finishedThreads, total) = await offThePool {
      let counter = LockedCounter()
      let finished = DispatchSemaphore(value: 0)
      for _ in 0..<threads {
        Thread.detachNewThread {
          for _ in 0..<increments { counter.lock.withLock { counter.count += 1 } }
          finished.signal()
        }
      }
      // Bounded: a lock that lost a wake-up would leave a thread asleep, and the test must fail
      // rather than hang.
      let deadline = DispatchTime.now() + 60
      let finishedCount = (0..<threads).count { _ in finished.wait(timeout: deadline) == .success }
      return (finishedCount, counter.lock.withLock { counter.count })
    }
    #expect(finishedThreads == threads, "a thread never finished: a lost wake-up")
    #expect(total == threads * increments)
  }

  /// A thread that waits long enough to stop spinning sleeps on the lock; letting go must wake it.
  @Test func aThreadWaitingForTheLockTakesItOnceItIsLetGo() async {
    let (countWhileHeld, wasWoken, countAfter) = await offThePool {
      let counter = LockedCounter()
      counter.lock.lock()
      let done = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        counter.lock.withLock { counter.count += 1 }
        done.signal()
      }
      // Far longer than the waiter's spin: by now it most likely sleeps on the lock. (Were it
      // still spinning, the test would only check the uncontended hand-over.)
      Thread.sleep(forTimeInterval: 0.02)
      // Read while holding the lock: the waiter cannot have incremented yet.
      let countWhileHeld = counter.count
      counter.lock.unlock()
      let wasWoken = done.wait(timeout: .now() + 30) == .success
      return (countWhileHeld, wasWoken, counter.lock.withLock { counter.count })
    }
    #expect(countWhileHeld == 0)
    #expect(wasWoken)
    #expect(countAfter == 1)
  }
}

/// A count guarded by a ``Lock``.
///
/// `@unchecked Sendable`: `count` is read and written only with `lock` held.
private final class LockedCounter: @unchecked Sendable {
  let lock = Lock()
  var count = 0

  deinit {
    lock.deallocate()
  }
}
