import Dispatch

/// Where a ``Driver`` and a ``Binder`` run their work: the main queue, or a stand-in for it in
/// tests.
///
/// The default, ``main``, follows one rule: work runs *at once* when the caller is already on the
/// main queue and nothing of the same driver or binder is still waiting there; otherwise it is
/// queued with `DispatchQueue.main.async`. A value set on the main queue therefore never overtakes
/// an earlier value that a background thread queued: it waits behind it.
///
/// Tests replace the main queue with ``immediate`` or with a ``ManualScheduler``, either for one
/// driver or binder (`asDriver(scheduler:)`, `Binder(_:scheduler:binding:)`) or for everything
/// created inside a scope:
///
/// ```swift
/// let main = ManualScheduler()
/// let driver = MainScheduler.withScheduler(.manual(main)) { model.title.asDriver() }
/// let token = driver.drive { print($0) }
/// main.runAll()  // delivers the queued replay, step by step if you prefer runNext()
/// ```
///
/// A driver or binder keeps the scheduler that was current when it was created.
///
/// > Important: ``main`` detects the main queue with a queue-specific key on
/// > `DispatchQueue.main`, not with `Thread.isMainThread`: under Swift Testing on Linux the main
/// > queue is drained by a thread that is not the main thread.
public struct MainScheduler: Sendable {
  enum Kind: Sendable {
    case main
    case immediate
    case manual(ManualScheduler)
  }

  let kind: Kind

  /// The main queue: immediate when already on it with nothing waiting, queued otherwise.
  public static var main: MainScheduler { MainScheduler(kind: .main) }

  /// Runs all work at once on the calling thread, which stands for the main queue.
  ///
  /// For tests of values and order that need no waiting. Work is still serialized: a value sent
  /// while another is being delivered (from a callback or from another thread) is delivered
  /// after it, by the thread already delivering.
  ///
  /// Time does not pass on this scheduler: work that should wait (the quiet period of
  /// ``Driver/debounce(for:)``, a window of ``Driver/throttle(for:latest:)``) runs at once, as if
  /// the wait were already over, so timing operators pass every value straight through. Test
  /// them on a ``ManualScheduler``, whose clock you advance by hand.
  ///
  /// > Important: `@MainActor` closures run on whatever thread sends the value, without an
  /// > isolation check. Send from the main actor (an `@MainActor` test) if the closures touch
  /// > main-actor state.
  public static var immediate: MainScheduler { MainScheduler(kind: .immediate) }

  /// Queues all work on `scheduler`, which runs it only when told to.
  ///
  /// - Parameter scheduler: The manual scheduler that stands for the main queue.
  /// - Returns: A scheduler backed by `scheduler`.
  public static func manual(_ scheduler: ManualScheduler) -> MainScheduler {
    MainScheduler(kind: .manual(scheduler))
  }

  @TaskLocal static var override: MainScheduler?

  /// Whether `other` delivers on the same main queue: both `.main`, both `.immediate`, or the
  /// same manual scheduler.
  func isSame(as other: MainScheduler) -> Bool {
    switch (kind, other.kind) {
    case (.main, .main), (.immediate, .immediate): true
    case (.manual(let mine), .manual(let theirs)): mine === theirs
    default: false
    }
  }

  /// The scheduler that drivers and binders created now use: ``main`` unless a
  /// ``withScheduler(_:operation:)`` scope on this task or thread says otherwise.
  public static var current: MainScheduler { override ?? .main }

  /// Makes `scheduler` the ``current`` one while `operation` runs.
  ///
  /// The override is a task-local value: it applies to drivers and binders created by
  /// `operation` on the calling task or thread, not to work `operation` sends to other threads.
  ///
  /// ```swift
  /// let viewModel = MainScheduler.withScheduler(.immediate) { ProfileViewModel(user) }
  /// ```
  ///
  /// - Parameters:
  ///   - scheduler: The scheduler to use.
  ///   - operation: The code that creates drivers and binders.
  /// - Returns: What `operation` returns.
  public static func withScheduler<Result>(
    _ scheduler: MainScheduler,
    operation: () throws -> Result
  ) rethrows -> Result {
    try $override.withValue(scheduler, operation: operation)
  }

  // MARK: - Internal

  /// Whether the caller stands on this scheduler's main queue.
  var isCurrent: Bool {
    switch kind {
    case .main: MainQueue.isCurrent
    case .immediate: true
    case .manual(let manual): manual.isCurrent
    }
  }

  /// Whether queued work should simply run on the thread that found it (no real hop).
  var runsInline: Bool {
    if case .immediate = kind { return true }
    return false
  }

  /// Queues `work` to run on this scheduler's main queue later.
  func enqueue(_ work: @escaping @Sendable () -> Void) {
    switch kind {
    case .main: DispatchQueue.main.async(execute: work)
    case .immediate: work()
    case .manual(let manual): manual.enqueue(work)
    }
  }

  /// Queues `work` to run on this scheduler's main queue once `interval` has passed.
  ///
  /// ``main`` uses `DispatchQueue.main.asyncAfter`; a ``ManualScheduler`` runs it when
  /// ``ManualScheduler/advance(by:)`` reaches its time; ``immediate`` runs it at once, on the
  /// calling thread, as if the interval were already over. The work cannot be cancelled: it should
  /// hold what it acts on weakly, and check when it runs whether it is still wanted.
  func enqueue(after interval: Interval, _ work: @escaping @Sendable () -> Void) {
    switch kind {
    case .main:
      // From uptime nanoseconds rather than `.now() + .nanoseconds(_:)`, whose `Int` count holds
      // only about two seconds on 32-bit watchOS.
      let now = DispatchTime.now().uptimeNanoseconds
      let (deadline, overflow) = now.addingReportingOverflow(UInt64(interval.nanoseconds))
      DispatchQueue.main.asyncAfter(
        deadline: overflow ? .distantFuture : DispatchTime(uptimeNanoseconds: deadline),
        execute: work)
    case .immediate: work()
    case .manual(let manual): manual.enqueue(after: interval, work)
    }
  }

  /// Calls main-actor code with `argument`; callers are deliveries of a ``MainQueueLane``, which
  /// run on this scheduler's main queue.
  ///
  /// On ``main`` the lane has checked once per drain that it runs on the main queue, which is the
  /// main actor's executor (with `MainActor.assumeIsolated`, which on Linux asks libdispatch about
  /// the current queue, not the thread, so it holds under Swift Testing too). The test schedulers
  /// stand in for the main queue without being it: they call the closure without the check, as
  /// documented on ``immediate`` and ``ManualScheduler``.
  ///
  /// The closure is called through a nonisolated cast (the standard library's
  /// `assumeIsolated` does the same) rather than inside `assumeIsolated`'s closure, because the
  /// argument, a value that came from another thread through a lane's lock, need not be
  /// `Sendable`; the types document that values should be.
  func runOnMainActor<Argument>(_ body: @MainActor (Argument) -> Void, with argument: Argument) {
    withoutActuallyEscaping(body) { escapable in
      unsafeBitCast(escapable, to: ((Argument) -> Void).self)(argument)
    }
  }
}
