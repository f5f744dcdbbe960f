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

/// Runs `body` as a task on a thread of its own and waits for it without holding a thread.
///
/// For a test that blocks while it waits for other threads (a gate, a semaphore, concurrent
/// bodies): Swift Testing runs tests on the pool of as many threads as there are cores, and on
/// Linux the global dispatch queues share those threads, so a test blocked there keeps awaited
/// deliveries, the library's delivery queue and the other tests from running; on a busy machine
/// they then miss their deadlines. The task inherits the test's task-local values, so `#expect`
/// and `Issue.record` in `body` report to the running test as usual. At most one body per core
/// runs at a time (see `ownThreads`); the others wait for their turn without holding a thread,
/// and their deadlines start once they run.
///
/// Where task executors are not available (before macOS 15 and its peers), `body` runs inline.
package func onItsOwnThread<Result: Sendable>(
  _ body: sending @escaping () async -> Result
) async -> Result {
  guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
    return await body()
  }
  await ownThreads.acquire()
  defer { ownThreads.release() }
  let executor = DedicatedThreadExecutor()
  defer { executor.shutDown() }
  return await Task(executorPreference: executor, operation: body).value
}

/// ``onItsOwnThread(_:)`` for a `body` that throws; the error is rethrown.
package func onItsOwnThread<Result: Sendable>(
  _ body: sending @escaping () async throws -> Result
) async throws -> Result {
  guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
    return try await body()
  }
  await ownThreads.acquire()
  defer { ownThreads.release() }
  let executor = DedicatedThreadExecutor()
  defer { executor.shutDown() }
  return try await Task(executorPreference: executor, operation: body).value
}

/// How many ``onItsOwnThread(_:)`` bodies run at once: one per core, as many as the pool they
/// leave would have run. Without the limit, every such test of the suite would start at once, and
/// tens of threads, each stressing the library with several of its own, would share the cores:
/// each would crawl, and the tests that widen a race window with `sched_yield` (whose cost grows
/// with the number of runnable threads) would miss their deadlines.
private let ownThreads = AsyncLimiter(ProcessInfo.processInfo.activeProcessorCount)

/// Lets at most `limit` tasks hold a slot at once; the others wait for one without holding a
/// thread, in the order they asked.
private final class AsyncLimiter: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var available: Int
  private var waiting: [CheckedContinuation<Void, Never>] = []

  init(_ limit: Int) {
    available = max(1, limit)
  }

  func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      lock.lock()
      if available > 0 {
        available -= 1
        lock.unlock()
        continuation.resume()
      } else {
        waiting.append(continuation)
        lock.unlock()
      }
    }
  }

  func release() {
    lock.lock()
    if waiting.isEmpty {
      available += 1
      lock.unlock()
    } else {
      let next = waiting.removeFirst()
      lock.unlock()
      next.resume()  // the slot passes to it
    }
  }
}

/// A task executor that runs its jobs on one thread of its own, started with it, until it is
/// shut down.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
package final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  // Guarded by `condition`.
  private var jobs: [UnownedJob] = []
  private var isShutDown = false

  /// Starts the executor's thread.
  package init() {
    let thread = Thread { [self] in run() }
    thread.stackSize = 8 << 20
    thread.start()
  }

  /// Enqueues `job` to run on the executor's thread.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.withLock {
      jobs.append(job)
      condition.signal()
    }
  }

  /// Lets the thread end once it has run the jobs already enqueued.
  package func shutDown() {
    condition.withLock {
      isShutDown = true
      condition.signal()
    }
  }

  private func run() {
    while true {
      let job: UnownedJob? = condition.withLock {
        // A timed wait in a loop: the same as waiting for the signal, without an unbounded wait.
        while jobs.isEmpty && !isShutDown {
          _ = condition.wait(until: Date().addingTimeInterval(1))
        }
        return jobs.isEmpty ? nil : jobs.removeFirst()
      }
      guard let job else { return }
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
