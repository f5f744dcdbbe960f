/// A stand-in for the main queue that runs queued work only when a test says so, step by step.
///
/// Create drivers and binders with ``MainScheduler/manual(_:)`` (directly or through
/// ``MainScheduler/withScheduler(_:operation:)``); every value they would deliver on the main
/// queue waits here until ``runNext()`` or ``runAll()``. Code run by the scheduler, and code
/// passed to ``runOnMain(_:)``, counts as "on the main queue", so a test can also reproduce a
/// value set on the main queue while earlier work is still waiting:
///
/// ```swift
/// let main = ManualScheduler()
/// let driver = model.count.asDriver(scheduler: .manual(main))
/// let token = driver.drive { log.append($0) }
/// model.count.value = 1  // from "a background thread": queued
/// main.runOnMain { model.count.value = 2 }  // on "the main queue", but must not overtake 1
/// main.runAll()  // log == [0, 1, 2]
/// ```
///
/// > Important: `@MainActor` closures run on the thread that calls ``runNext()``, ``runAll()``
/// > or ``runOnMain(_:)``, without an isolation check; call them from the main actor (an
/// > `@MainActor` test) if the closures touch main-actor state. One thread at a time may run
/// > the scheduler.
public final class ManualScheduler {
  private let lock = Lock()
  @exclusivity(unchecked) private var queue: [@Sendable () -> Void] = []
  @exclusivity(unchecked) private var runner: ThreadID?
  @exclusivity(unchecked) private var depth = 0

  /// Creates a scheduler with nothing queued.
  public init() {}

  deinit {
    lock.deallocate()
  }

  /// The number of work items waiting to run.
  public var pendingCount: Int {
    lock.withLock { queue.count }
  }

  /// Runs the oldest waiting work item, if any.
  ///
  /// - Returns: Whether an item ran.
  @discardableResult
  public func runNext() -> Bool {
    let work: (@Sendable () -> Void)? = lock.withLock {
      queue.isEmpty ? nil : queue.removeFirst()
    }
    guard let work else { return false }
    runOnMain(work)
    return true
  }

  /// Runs waiting work in order until none is left, including work queued while it runs.
  public func runAll() {
    while runNext() {}
  }

  /// Runs `body` now, as if it ran on the main queue: drivers and binders on this scheduler
  /// treat sends made inside it as main-queue sends.
  ///
  /// - Parameter body: The code to run.
  /// - Returns: What `body` returns.
  public func runOnMain<Result>(_ body: () throws -> Result) rethrows -> Result {
    enter()
    defer { leave() }
    return try body()
  }

  // MARK: - Internal

  var isCurrent: Bool {
    lock.withLock { runner == .current }
  }

  func enqueue(_ work: @escaping @Sendable () -> Void) {
    lock.withLock { queue.append(work) }
  }

  private func enter() {
    lock.withLock {
      precondition(
        runner == nil || runner == .current,
        "A ManualScheduler must be run from one thread at a time.")
      runner = .current
      depth += 1
    }
  }

  private func leave() {
    lock.withLock {
      depth -= 1
      if depth == 0 { runner = nil }
    }
  }
}

// Every stored property is guarded by `lock`.
extension ManualScheduler: @unchecked Sendable {}
