/// A stand-in for the main queue that runs queued work only when a test says so, step by step.
///
/// Create drivers and binders with ``MainScheduler/manual(_:)`` (directly or through
/// ``MainScheduler/withScheduler(_:operation:)``); every value they would deliver on the main
/// queue waits here until ``runNext()``, ``runAll()`` or ``advance(by:)``. Code run by the
/// scheduler, and code passed to ``runOnMain(_:)``, counts as "on the main queue", so a test can
/// also reproduce a value set on the main queue while earlier work is still waiting:
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
/// ## Virtual time
///
/// The scheduler also keeps a clock that moves only when a test calls ``advance(by:)``. Work
/// that should wait, such as the quiet period of ``Driver/debounce(for:)``, is scheduled on
/// that clock and runs once an advance reaches its time, so timing tests need no sleeps:
///
/// ```swift
/// let main = ManualScheduler()
/// let text = Observable("")
/// let query = text.asDriver(scheduler: .manual(main)).debounce(for: .milliseconds(300))
/// let token = query.drive { log.append($0) }
/// main.runOnMain { text.value = "swift" }
/// main.advance(by: .milliseconds(299))  // log == []
/// main.advance(by: .milliseconds(1))  // log == ["swift"]
/// ```
///
/// ``runNext()`` and ``runAll()`` run only work that is due now; they never move the clock.
///
/// > Important: `@MainActor` closures run on the thread that calls ``runNext()``, ``runAll()``,
/// > ``advance(by:)`` or ``runOnMain(_:)``, without an isolation check; call them from the main
/// > actor (an `@MainActor` test) if the closures touch main-actor state. One thread at a time
/// > may run the scheduler.
public final class ManualScheduler {
  /// A work item and the virtual time at which it is due.
  private struct Entry {
    let due: MainScheduler.Interval
    let work: @Sendable () -> Void
  }

  private let lock = Lock()
  /// Sorted by due time; items due at the same time keep the order they were queued in.
  @exclusivity(unchecked) private var entries: [Entry] = []
  @exclusivity(unchecked) private var now = MainScheduler.Interval(nanoseconds: 0)
  @exclusivity(unchecked) private var runner: ThreadID?
  @exclusivity(unchecked) private var depth = 0
  /// The mailbox of the main-actor lanes on this scheduler, while one of them holds it: the
  /// mailbox holds the scheduler, so the scheduler holds it weakly.
  @exclusivity(unchecked) private weak var madeMainActorMailbox: MainQueueMailbox?

  /// Creates a scheduler with nothing queued, its clock at zero.
  public init() {}

  deinit {
    lock.deallocate()
  }

  /// The mailbox that every main-actor lane on this scheduler shares (see
  /// ``MainQueueMailbox/forMainActor(on:)``).
  var mainActorMailbox: MainQueueMailbox {
    lock.lock()
    defer { lock.unlock() }
    if let made = madeMainActorMailbox { return made }
    let made = MainQueueMailbox(scheduler: .manual(self), deliversBacklogInline: true)
    madeMainActorMailbox = made
    return made
  }

  /// The number of work items due to run now; work scheduled for a later virtual time is not
  /// counted.
  public var pendingCount: Int {
    lock.withLock { entries.prefix { $0.due <= now }.count }
  }

  /// The virtual time: how far ``advance(by:)`` has moved the clock since the scheduler was
  /// created.
  public var elapsedTime: MainScheduler.Interval {
    lock.withLock { now }
  }

  /// Runs the oldest work item that is due now, if any.
  ///
  /// - Returns: Whether an item ran.
  @discardableResult
  public func runNext() -> Bool {
    guard let work = takeNext(dueBy: nil) else { return false }
    runOnMain(work)
    return true
  }

  /// Runs the work that is due now, in order, until none is left, including work queued while it
  /// runs. The clock does not move.
  public func runAll() {
    while runNext() {}
  }

  /// Moves the clock forward by `interval`, running in order every work item that falls due on
  /// the way.
  ///
  /// Work due now runs first, then scheduled work in the order of its due time (items due at the
  /// same time in the order they were scheduled), with ``elapsedTime`` set to each item's time
  /// while it runs. Work that an item queues or schedules within the advance also runs, in its
  /// place. The clock ends at the starting time plus `interval`.
  ///
  /// ```swift
  /// main.advance(by: .milliseconds(300))
  /// ```
  ///
  /// - Parameter interval: How far to move the clock.
  public func advance(by interval: MainScheduler.Interval) {
    let target = lock.withLock { now + interval }
    while let work = takeNext(dueBy: target) {
      runOnMain(work)
    }
    lock.withLock { now = max(now, target) }
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
    lock.withLock { insert(Entry(due: now, work: work)) }
  }

  func enqueue(after interval: MainScheduler.Interval, _ work: @escaping @Sendable () -> Void) {
    lock.withLock { insert(Entry(due: now + interval, work: work)) }
  }

  /// Lock held. After every item due at the same time or earlier, so equal times stay in order.
  private func insert(_ entry: Entry) {
    var index = entries.endIndex
    while index > entries.startIndex, entries[index - 1].due > entry.due {
      index -= 1
    }
    entries.insert(entry, at: index)
  }

  /// Removes and returns the first item if it is due by `target` (by now when `nil`), moving the
  /// clock to its time.
  private func takeNext(dueBy target: MainScheduler.Interval?) -> (@Sendable () -> Void)? {
    lock.withLock {
      guard let first = entries.first, first.due <= (target ?? now) else { return nil }
      entries.removeFirst()
      now = max(now, first.due)
      return first.work
    }
  }

  private func enter() {
    lock.withLock {
      require(
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

// Every mutable property is guarded by `lock`; the queued work is `@Sendable` and runs outside
// it.
extension ManualScheduler: @unchecked Sendable {}
