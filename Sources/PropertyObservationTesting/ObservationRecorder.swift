public import Dispatch
public import PropertyObservation

/// Records the deliveries of one or more observables, in one global order, so that a test can
/// assert the exact sequence of callbacks.
///
/// Attach the recorder to every source whose callbacks you want to see, each under a label, then
/// compare the whole log with what you expect:
///
/// ```swift
/// import PropertyObservation
/// import PropertyObservationTesting
/// import Testing
///
/// @Test func renamingNotifiesOldThenNew() {
///   let name = Observable("Madeline")
///   let age = Observable(30)
///   let recorder = ObservationRecorder()
///   recorder.record(name, as: "name", options: [.initial, .old, .new])
///   recorder.record(age, as: "age")
///
///   name.value = "Amelia"
///   age.value = 31
///
///   #expect(recorder.events == [
///     .initial("name", "Madeline"),
///     .initial("age", 30),
///     .old("name", "Madeline"),
///     .new("name", "Amelia"),
///     .new("age", 31),
///   ])
/// }
/// ```
///
/// With XCTest, `XCTAssertNil(recorder.difference(from: expected))` prints a line-by-line
/// difference when the logs disagree; with Swift Testing,
/// `#expect(recorder.difference(from: expected) == nil)` does the same.
///
/// Anything that reports values through a closure (a binding's target, a Driver, your own
/// callback API) can feed the same log through ``sink(_:option:)``.
///
/// ## Threads and ordering
///
/// The recorder is thread-safe. Each event is appended under its lock as the callback runs, on
/// the delivering thread, so ``events`` holds the deliveries in the order they happened across
/// all sources and threads. To wait for deliveries made on other threads or queues, use
/// `waitForEvents(count:timeout:)` (a blocking and an `async` variant),
/// ``waitForEvents(timeout:where:)`` for a state rather than a number of events, or
/// ``onEventCount(_:perform:)``, never a sleep.
///
/// ## Lifetimes
///
/// The recorder owns one ``/PropertyObservation/ObservationToken`` per recording, and a token
/// keeps its observable alive; so a chain recorded inline
/// (`recorder.record(a.map { $0 * 2 }, as: "double")`) is recorded for as long as the recorder
/// lives. Nothing else holds the recorder: the observables capture it weakly, and when it is
/// released, or ``stopRecording()`` is called, every registration ends and the observables are
/// released. Call ``stopRecording()`` before asserting that an observable you recorded has been
/// deallocated.
public final class ObservationRecorder {
  private let lock = Lock()

  // Guarded by `lock`.
  private var recorded: [Event] = []
  private var tokens: [ObservationToken] = []
  private var waiters: [Waiter] = []
  private var nextWaiterID = 0

  /// A wait for the log to reach `count` events, or, when `condition` is set, for the log to
  /// satisfy it; `action` runs once, outside the lock.
  private struct Waiter {
    let id: Int
    let count: Int
    let condition: (@Sendable ([Event]) -> Bool)?
    let action: @Sendable () -> Void
  }

  /// Creates a recorder with an empty log.
  public init() {}

  deinit {
    lock.deallocate()
  }

  /// Every event recorded so far, in the order the deliveries happened.
  ///
  /// Reading returns a snapshot: deliveries on other threads may append more right after.
  public var events: [Event] {
    lock.withLock { recorded }
  }

  // MARK: - Recording

  /// Records every delivery of `observable` under `label`.
  ///
  /// The recorder registers with `options`, so with the default `[.initial, .new]` the value
  /// current now is recorded before this method returns, followed by one `.new` event per set.
  /// Add `.old` to see the value each set replaces, in the position the engine delivers it.
  ///
  /// Record the same observable twice under two labels to watch two registrations: their events
  /// come in registration order within each round.
  ///
  /// - Parameters:
  ///   - observable: The observable, derived observable or binding source to watch. The recorder
  ///     keeps it alive until the recorder is released or ``stopRecording()`` is called.
  ///   - label: The name recorded in each event.
  ///   - options: The options to register with; `[.initial, .new]` by default.
  public func record<Value: Equatable & Sendable>(
    _ observable: ReadOnlyObservable<Value>,
    as label: String,
    options: ObservableOptions = [.initial, .new]
  ) {
    record(observable, as: label, options: options) { $0 }
  }

  /// Records every delivery of `observable` under `label`, storing what `transform` makes of
  /// each value: the way to record values that are not `Equatable` or not `Sendable`.
  ///
  /// ```swift
  /// recorder.record(session.user, as: "user") { $0?.name }
  /// ```
  ///
  /// - Parameters:
  ///   - observable: The observable to watch, kept alive as by ``record(_:as:options:)``.
  ///   - label: The name recorded in each event.
  ///   - options: The options to register with; `[.initial, .new]` by default.
  ///   - transform: Makes the recorded value from the delivered one. It runs on the delivering
  ///     thread, without the recorder's lock held, so it must be `@Sendable`.
  public func record<Value, Recorded: Equatable & Sendable>(
    _ observable: ReadOnlyObservable<Value>,
    as label: String,
    options: ObservableOptions = [.initial, .new],
    transform: @escaping @Sendable (Value) -> Recorded
  ) {
    // `weak`: the observable holds this closure and the recorder holds the observable's token.
    // A removal from another thread can let the closure run once more after `stopRecording()`
    // or the recorder's release, which `weak` also covers.
    let token = observable.observe(options: options) { [weak self] value, option in
      guard let self else { return }
      self.append(Event(label, option, transform(value)))
    }
    lock.withLock { tokens.append(token) }
  }

  /// A closure that records each value it receives as an event under `label`: the one-line way
  /// to record any callback-based API into the same log.
  ///
  /// ```swift
  /// let recorder = ObservationRecorder()
  /// recorder.record(model.title, as: "model")
  /// label.onTextChange = recorder.sink("label")
  /// ```
  ///
  /// The closure holds the recorder weakly, so storing it in the observed object creates no
  /// cycle; once the recorder is gone, it does nothing.
  ///
  /// - Parameters:
  ///   - label: The name recorded in each event.
  ///   - option: The option recorded in each event; `.new` by default.
  /// - Returns: A closure to pass wherever a `(Value) -> Void` callback is expected. It may be
  ///   called from any thread.
  public func sink<Value: Equatable & Sendable>(
    _ label: String,
    option: ObservableOptions = .new
  ) -> @Sendable (Value) -> Void {
    { [weak self] value in self?.append(Event(label, option, value)) }
  }

  /// Appends `event` to the log, for example a marker between the steps of a test.
  ///
  /// - Parameter event: The event to record.
  public func append(_ event: Event) {
    let (ready, log): ([Waiter], [Event]?) = lock.withLock {
      recorded.append(event)
      guard !waiters.isEmpty else { return ([], nil) }
      let count = recorded.count
      let ready = waiters.filter { $0.condition == nil && $0.count <= count }
      if !ready.isEmpty { waiters.removeAll { $0.condition == nil && $0.count <= count } }
      // Conditions are the test's code: they see a copy of the log, outside the lock.
      let hasConditions = waiters.contains { $0.condition != nil }
      return (ready, hasConditions ? recorded : nil)
    }
    for waiter in ready { waiter.action() }
    if let log { resolveConditions(on: log) }
  }

  /// Runs the action of each condition waiter that `log` satisfies, once: a waiter is claimed
  /// under the lock, so a concurrent append that also finds it satisfied does not run it again.
  private func resolveConditions(on log: [Event]) {
    let waiting = lock.withLock { waiters.filter { $0.condition != nil } }
    for waiter in waiting where waiter.condition?(log) == true {
      let isClaimed = lock.withLock {
        guard let index = waiters.firstIndex(where: { $0.id == waiter.id }) else { return false }
        waiters.remove(at: index)
        return true
      }
      if isClaimed { waiter.action() }
    }
  }

  /// Empties the log; recording continues.
  ///
  /// Waits in progress keep counting from the new, empty log.
  public func removeAllEvents() {
    lock.withLock { recorded.removeAll() }
  }

  /// Ends every recording and releases the observables; the log is kept.
  ///
  /// Called from a callback, the registrations end at once. Called from another thread while a
  /// round is running, a registration may deliver once more (the engine ends it at the round
  /// boundary), and that delivery is still recorded.
  public func stopRecording() {
    let tokens = lock.withLock {
      defer { self.tokens.removeAll() }
      return self.tokens
    }
    for token in tokens { token.cancel() }
  }

  // MARK: - Waiting

  /// Blocks the calling thread until the log holds at least `count` events, or until `timeout`
  /// has passed.
  ///
  /// ```swift
  /// DispatchQueue.global().async { counter.value = 1 }
  /// #expect(recorder.waitForEvents(count: 2))
  /// ```
  ///
  /// > Important: Do not block the thread that must deliver the events: waiting on the main
  /// > thread for events a Driver delivers on the main queue never succeeds. Use the `async`
  /// > variant, or ``onEventCount(_:perform:)`` with an `XCTestExpectation`, there.
  ///
  /// - Parameters:
  ///   - count: The number of events to wait for, counted from the start of the log.
  ///   - timeout: How long to wait at most; ten seconds by default.
  /// - Returns: `true` if the log holds at least `count` events, `false` if the wait timed out.
  @discardableResult
  public func waitForEvents(count: Int, timeout: DispatchTimeInterval = .seconds(10)) -> Bool {
    let semaphore = DispatchSemaphore(value: 0)
    guard let id = addWaiter(count: count, action: { semaphore.signal() }) else { return true }
    if semaphore.wait(timeout: .now() + timeout) == .success { return true }
    removeWaiter(id: id)
    return lock.withLock { recorded.count >= count }
  }

  /// Suspends until the log holds at least `count` events, until `timeout` has passed, or until
  /// the task is cancelled.
  ///
  /// ```swift
  /// @Test func driverDeliversOnMain() async {
  ///   let recorder = ObservationRecorder()
  ///   let token = driver.drive(recorder.sink("driver"))
  ///   model.value = 2
  ///   #expect(await recorder.waitForEvents(count: 2))
  ///   token.cancel()
  /// }
  /// ```
  ///
  /// The calling thread is not blocked, so the events may be delivered on the caller's own actor
  /// (for example the main actor) while it waits.
  ///
  /// - Parameters:
  ///   - count: The number of events to wait for, counted from the start of the log.
  ///   - timeout: How long to wait at most; ten seconds by default.
  /// - Returns: `true` if the log holds at least `count` events, `false` if the wait timed out or
  ///   the task was cancelled first.
  @discardableResult
  public func waitForEvents(
    count: Int,
    timeout: DispatchTimeInterval = .seconds(10)
  ) async -> Bool {
    let wait = AsyncWait()
    let id = addWaiter(count: count, action: { wait.resolve(true) })
    return await outcome(of: wait, waiter: id, timeout: timeout)
  }

  /// Suspends until the recorded events satisfy `condition`, until `timeout` has passed, or
  /// until the task is cancelled: the form for a state rather than a number of events, when
  /// events you do not care about may arrive in between.
  ///
  /// ```swift
  /// @Test func theSearchFinishesLoading() async {
  ///   let isLoading = Observable(false)
  ///   let recorder = ObservationRecorder()
  ///   recorder.record(isLoading, as: "loading")
  ///   DispatchQueue.global().async {  // a search that may load several times
  ///     isLoading.value = true
  ///     isLoading.value = false
  ///   }
  ///   #expect(await recorder.waitForEvents { $0.last == .new("loading", false) })
  /// }
  /// ```
  ///
  /// `condition` receives the whole log, oldest event first. It runs at once, then after each
  /// new event, on the thread that recorded it and outside the recorder's lock; keep it quick
  /// and free of side effects. It may run again for events recorded at the same moment on other
  /// threads, but the wait ends once. The calling thread is not blocked, so the events may be
  /// delivered on the caller's own actor while it waits.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait at most; ten seconds by default.
  ///   - condition: Whether the recorded events are the state to wait for.
  /// - Returns: `true` once `condition` holds, `false` if the wait timed out or the task was
  ///   cancelled first.
  @discardableResult
  public func waitForEvents(
    timeout: DispatchTimeInterval = .seconds(10),
    where condition: @escaping @Sendable ([Event]) -> Bool
  ) async -> Bool {
    let wait = AsyncWait()
    let id = addWaiter(until: condition, action: { wait.resolve(true) })
    return await outcome(of: wait, waiter: id, timeout: timeout)
  }

  /// Awaits `wait`, which the waiter `id` resolves with `true` (`nil`: already satisfied), the
  /// timeout or the task's cancellation with `false`, then forgets the waiter.
  private func outcome(
    of wait: AsyncWait, waiter id: Int?, timeout: DispatchTimeInterval
  ) async -> Bool {
    guard let id else { return true }
    if timeout != .never {
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { wait.resolve(false) }
    }
    let reached = await withTaskCancellationHandler {
      await wait.result()
    } onCancel: {
      wait.resolve(false)
    }
    removeWaiter(id: id)
    return reached
  }

  /// Runs `action` once, as soon as the log holds at least `count` events.
  ///
  /// If the log already holds that many, `action` runs at once, on the caller's thread;
  /// otherwise it runs on the thread that records the `count`-th event, right after recording
  /// it. This suits XCTest, whose `wait(for:timeout:)` keeps the main run loop turning:
  ///
  /// ```swift
  /// let delivered = expectation(description: "two values on the main queue")
  /// recorder.onEventCount(2) { delivered.fulfill() }
  /// wait(for: [delivered], timeout: 1)
  /// ```
  ///
  /// - Parameters:
  ///   - count: The number of events to wait for, counted from the start of the log.
  ///   - action: What to run; it must not block the delivering thread.
  public func onEventCount(_ count: Int, perform action: @escaping @Sendable () -> Void) {
    if addWaiter(count: count, action: action) == nil { action() }
  }

  /// Registers a waiter, or returns `nil` if the log already holds `count` events.
  private func addWaiter(count: Int, action: @escaping @Sendable () -> Void) -> Int? {
    lock.withLock {
      guard recorded.count < count else { return nil }
      nextWaiterID += 1
      waiters.append(Waiter(id: nextWaiterID, count: count, condition: nil, action: action))
      return nextWaiterID
    }
  }

  /// Registers a waiter for `condition`, or returns `nil` if the log already satisfies it.
  ///
  /// The waiter is registered before the condition is first checked, so an event appended in
  /// between is checked by its own append: none is missed.
  private func addWaiter(
    until condition: @escaping @Sendable ([Event]) -> Bool,
    action: @escaping @Sendable () -> Void
  ) -> Int? {
    let (id, log) = lock.withLock {
      nextWaiterID += 1
      waiters.append(
        Waiter(id: nextWaiterID, count: .max, condition: condition, action: action))
      return (nextWaiterID, recorded)
    }
    guard condition(log) else { return id }
    let isClaimed = lock.withLock {
      guard let index = waiters.firstIndex(where: { $0.id == id }) else { return false }
      waiters.remove(at: index)
      return true
    }
    // Claimed by an append meanwhile, the action has run (or is running): wait for nothing.
    return isClaimed ? nil : id
  }

  private func removeWaiter(id: Int) {
    lock.withLock { waiters.removeAll { $0.id == id } }
  }

  // MARK: - Failure descriptions

  /// A readable, line-by-line difference between `expected` and the recorded events, or `nil`
  /// when they are equal.
  ///
  /// Lines both logs share start with two spaces, missing expected events with `-`, unexpected
  /// recorded events with `+`, each written the way ``Event`` is written in Swift:
  ///
  /// ```text
  /// Recorded events differ from the expected ones (- expected, + recorded):
  ///   .initial("name", "Madeline")
  /// - .new("name", "Amelia")
  /// + .new("name", "Ada")
  /// ```
  ///
  /// Use it as the assertion itself, which prints the text on failure:
  /// `#expect(recorder.difference(from: expected) == nil)` or
  /// `XCTAssertNil(recorder.difference(from: expected))`.
  ///
  /// - Parameter expected: The events the test expects, in order.
  /// - Returns: The difference, or `nil` if ``events`` equals `expected`.
  public func difference(from expected: [Event]) -> String? {
    EventDifference.describe(expected: expected, recorded: events)
  }
}

// Every mutable property is guarded by `lock`, and recorded values are `Sendable`; the waiters'
// conditions and actions are `@Sendable` and run outside the lock.
extension ObservationRecorder: @unchecked Sendable {}

extension ObservationRecorder: CustomStringConvertible {
  /// The recorded events, one per line, for printing while writing a test.
  public var description: String {
    let lines = events.map { "\n  \($0)" }
    let count = lines.count == 1 ? "1 event" : "\(lines.count) events"
    return "ObservationRecorder(\(count))" + lines.joined()
  }
}

/// One `async` wait's outcome, settled exactly once by whichever comes first: enough events, the
/// timeout, or the task's cancellation.
///
/// `@unchecked Sendable`: `outcome` and `continuation` are guarded by `lock`, and the
/// continuation is resumed after unlocking.
private final class AsyncWait: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var outcome: Bool?
  private var continuation: CheckedContinuation<Bool, Never>?

  deinit {
    lock.deallocate()
  }

  func resolve(_ reached: Bool) {
    let continuation: CheckedContinuation<Bool, Never>? = lock.withLock {
      guard outcome == nil else { return nil }
      outcome = reached
      defer { self.continuation = nil }
      return self.continuation
    }
    continuation?.resume(returning: reached)
  }

  func result() async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      let settled: Bool? = lock.withLock {
        if let outcome { return outcome }
        self.continuation = continuation
        return nil
      }
      if let settled { continuation.resume(returning: settled) }
    }
  }
}
