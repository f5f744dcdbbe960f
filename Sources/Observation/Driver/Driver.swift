/// A main-queue view of an observable for UI code: it never fails, delivers on the main queue in
/// order, shares one upstream observation among all its subscribers, and replays the latest
/// value to each new one.
///
/// Create one with ``ReadOnlyObservable/asDriver(policy:scheduler:)`` and drive views with it:
///
/// ```swift
/// @MainActor final class DownloadViewController {
///   let titleLabel = Label()
///   let progressView = ProgressView()
///   private var tokens = Set<ObservationToken>()
///
///   func show(_ download: Download) {
///     let title = download.title.asDriver()  // set from a background queue
///     title.drive(titleLabel, \.text)  // ends when the label goes
///     download.progress.asDriver(policy: .coalescing)
///       .drive { [progressView] in progressView.fraction = $0 }
///       .store(in: &tokens)
///   }
/// }
/// ```
///
/// ## Main queue
///
/// Every callback runs on the main queue (see ``MainScheduler``). A value is delivered at once,
/// inside the call that set it, when it is set on the main queue and nothing of this driver is
/// still waiting there; otherwise it is queued with `DispatchQueue.main.async`. One main-queue
/// turn delivers every waiting value, also those that arrive while it runs, for up to about
/// 8 ms; then it yields the main queue and a later turn goes on, so a fast producer costs one
/// hop per turn, not one per value. A value set on the main queue never overtakes one queued
/// earlier from a background thread, and a value set from inside a drive callback is delivered
/// after that callback's value to every subscriber. `drive` itself may be called from any
/// thread: the replay then reaches the subscriber on the main queue a moment later.
///
/// ## Sharing and replay
///
/// All subscribers share one registration on the upstream observable, made when the first
/// subscribes and removed when the last goes, so one change runs the upstream work (a derived
/// observable's transform, the `onErrorRecover` closure) once, however many subscribers there
/// are. A new subscriber first receives the value that was current when it subscribed, then
/// every later change, in order.
///
/// ## Lifetime
///
/// A driver keeps its source observable alive (so `model.name.map(format).asDriver()` may be
/// stored on its own), and each ``ObservationToken`` from `drive(_:)` keeps the driver alive.
/// Nothing else does: an unused driver is released, and the upstream registration ends with the
/// last subscriber. A drive owned by a target (`drive(target, \.property)`, ``drive(with:_:)``,
/// `drive(binder)`) keeps the driver alive until the target is gone; the driver notices that at
/// the next upstream change or delivery, then lets go (until then the driver and its source stay
/// in memory; prefer the token form where the source may outlive the view without changing).
///
/// > Important: Values cross from the thread that set them to the main queue. Use `Sendable`
/// > values (the driver is `Sendable` when `Value` is). Cancelling a token on the main queue
/// > stops its deliveries at once, also deliveries already queued; cancelling it on another
/// > thread while the main queue is delivering may let that one delivery through.
public final class Driver<Value> {
  typealias Subscription = DriveSubscription

  /// The tag bit of a lane item that is a replay: the value current when a subscriber joined,
  /// for it alone (the first of `pendingReplays`). An item without it is a change for every
  /// subscriber that joined before the sequence number its tag holds.
  ///
  /// The lane's items are the values themselves, with their kind in the tag: an enum of the two
  /// kinds, generic over `Value`, would cost a metadata look-up per value in this unspecialized
  /// code, on the producer's thread and on the main queue.
  private static var replayTag: UInt64 { 1 << 63 }

  /// Registers the given closure on the source with `.initial` and `.new`; captures the source.
  private let connectUpstream: (@escaping (Value) -> Void) -> ObservationToken
  private let policy: DeliveryPolicy
  /// Guards the upstream state: the connection, the sequence and the latest value.
  private let lock = Lock()
  /// Guards the list of subscriptions, their `isActive` flags and `pendingReplays`, which the
  /// main queue reads once per value: a lock of their own, so that it does not contend with a
  /// producer for `lock` on every value. Changed with both locks held, `lock` first, so either
  /// lock suffices to read them.
  private let listLock = Lock()
  // Set once in `init`, read-only afterwards.
  private var lane: MainQueueLane<Value, UInt64>!

  // Guarded by `lock` and `listLock` (see `listLock`).
  @exclusivity(unchecked) private var subscriptions: [Subscription] = []
  /// The subscribers whose replay waits in the lane, in the lane's order.
  @exclusivity(unchecked) private var pendingReplays: [Subscription] = []
  // Guarded by `lock`.
  @exclusivity(unchecked) private var targetOwnedCount = 0
  @exclusivity(unchecked) private var upstream: ObservationToken?
  @exclusivity(unchecked) private var isConnecting = false
  /// Bumped on every disconnect, so a late callback of an ended upstream registration (the core
  /// may call it once more when it is removed from another thread) is ignored.
  @exclusivity(unchecked) private var connection: UInt64 = 0
  @exclusivity(unchecked) private var sequence: UInt64 = 0
  /// The latest value, initialized while `hasLatest`: a pointer rather than an optional, whose
  /// metadata this unspecialized code would look up on every value.
  private let latest = UnsafeMutablePointer<Value>.allocate(capacity: 1)
  @exclusivity(unchecked) private var hasLatest = false
  /// The driver itself while target-owned drives exist, since no token holds it then.
  @exclusivity(unchecked) private var keepAlive: Driver<Value>?

  init(
    policy: DeliveryPolicy,
    scheduler: MainScheduler,
    connectUpstream: @escaping (@escaping (Value) -> Void) -> ObservationToken
  ) {
    self.policy = policy
    self.connectUpstream = connectUpstream
    // The lane may outlive the driver by a queued turn; it must not keep the driver alive.
    let box = WeakDriver<Value>()
    self.lane = MainQueueLane(scheduler: scheduler, latestPerTurn: policy == .coalescing) {
      guard let driver = box.driver else { return nil }
      return { value, tag in driver.deliver(UnsafeRawPointer(value), tag: tag.pointee) }
    }
    box.driver = self
  }

  deinit {
    // Nothing else can reach the driver now: releasing the latest value runs no user code under
    // a lock.
    if hasLatest { latest.deinitialize(count: 1) }
    latest.deallocate()
    lock.deallocate()
    listLock.deallocate()
  }

  // MARK: - Driving

  /// Calls `onNext` on the main queue with the current value, then with every change, until the
  /// returned token is cancelled or released.
  ///
  /// ```swift
  /// // In a view controller: capture the label, not `self`, which would keep the controller
  /// // alive as long as the token it stores.
  /// let token = model.status.asDriver().drive { [statusLabel] status in
  ///   statusLabel.text = status
  /// }
  /// ```
  ///
  /// When called on the main queue with nothing of this driver waiting, `onNext` receives the
  /// current value before `drive` returns; otherwise it receives it on the main queue shortly
  /// after. Calling `drive` from a background thread is allowed.
  ///
  /// - Parameter onNext: Receives each value, on the main queue.
  /// - Returns: The token that owns the subscription; it also keeps the driver alive.
  public func drive(_ onNext: @escaping @MainActor @Sendable (Value) -> Void) -> ObservationToken {
    let token = ObservationToken(source: self)
    let scheduler = lane.scheduler
    subscribe(
      Subscription(tokenIdentity: Self.identity(of: token)) { (value: Value) in
        scheduler.runOnMainActor(onNext, with: value)
      })
    return token
  }

  /// Sets `keyPath` of `target` to the current value and to every change, on the main queue,
  /// for as long as `target` lives.
  ///
  /// `target` is held weakly; the drive ends by itself when it is deallocated, or earlier with
  /// ``stopDriving(_:)``. There is no token to keep.
  ///
  /// ```swift
  /// model.title.asDriver().drive(titleLabel, \.text)
  /// ```
  ///
  /// - Parameters:
  ///   - target: The object to update, held weakly.
  ///   - keyPath: The property to set.
  public func drive<Target: AnyObject & Sendable>(
    _ target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value>
  ) {
    subscribe(
      Subscription(target: target) { [weak target] (value: Value) in
        target?[keyPath: keyPath] = value
      })
  }

  /// Sets an optional `keyPath` of `target` (a label's `text: String?`) to the current value and
  /// to every change, on the main queue, for as long as `target` lives.
  ///
  /// Behaves like the non-optional form, `drive(target, \.property)`.
  ///
  /// - Parameters:
  ///   - target: The object to update, held weakly.
  ///   - keyPath: The optional property to set.
  public func drive<Target: AnyObject & Sendable>(
    _ target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value?>
  ) {
    subscribe(
      Subscription(target: target) { [weak target] (value: Value) in
        target?[keyPath: keyPath] = value
      })
  }

  /// Calls `handler` with `owner` and the current value, then with every change, on the main
  /// queue, for as long as `owner` lives.
  ///
  /// `owner` is held weakly and passed to `handler`, so the closure needs no `[weak self]`. The
  /// drive ends when `owner` is deallocated, or earlier with ``stopDriving(_:)``.
  ///
  /// ```swift
  /// download.progress.asDriver().drive(with: self) { controller, fraction in
  ///   controller.progressView.fraction = fraction
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - owner: The owner of the drive, held weakly.
  ///   - handler: Receives the owner and each value, on the main queue.
  public func drive<Owner: AnyObject & Sendable>(
    with owner: Owner,
    _ handler: @escaping @MainActor @Sendable (Owner, Value) -> Void
  ) {
    let scheduler = lane.scheduler
    subscribe(
      Subscription(target: owner) { [weak owner] (value: Value) in
        guard let owner else { return }
        scheduler.runOnMainActor(handler, with: (owner, value))
      })
  }

  /// Sends the current value and every change to `binder`, for as long as its target lives.
  ///
  /// The values reach the binder on the main queue, so it applies them at once. If the binder's
  /// target is already gone, nothing happens.
  ///
  /// - Parameter binder: The binder to feed; its target owns the drive.
  public func drive(_ binder: Binder<Value>) {
    guard let target = binder.target else { return }
    subscribe(Subscription(target: target) { (value: Value) in binder.send(value) })
  }

  /// Ends every drive owned by `target` (key-path, owner and binder drives) now.
  ///
  /// Called on the main queue, no further value reaches `target` through this driver, not even
  /// one already queued. Stopping a target that has no drive does nothing.
  ///
  /// - Parameter target: The target or owner passed to `drive`.
  public func stopDriving(_ target: AnyObject) {
    removeSubscriptions { $0.target === target }
  }

  /// How many times this driver has queued work on the main queue (a "hop"), for benchmarks and
  /// diagnostics.
  ///
  /// Values delivered at once on the main queue, and values that join a turn already queued or
  /// running, cost no hop; with ``DeliveryPolicy/coalescing`` a burst of background values costs
  /// one hop per main-queue turn, at most about one per millisecond.
  public var mainQueueHopCount: Int {
    lane.hopCount
  }

  /// The scheduler this driver delivers on; operators that derive a driver from it use it too.
  var scheduler: MainScheduler {
    lane.scheduler
  }

  // MARK: - Subscriptions

  private static func identity(of token: AnyObject) -> UInt {
    UInt(bitPattern: ObjectIdentifier(token))
  }

  private func subscribe(_ subscription: Subscription) {
    lock.lock()
    subscription.joined = sequence
    listLock.lock()
    subscriptions.append(subscription)
    if hasLatest { pendingReplays.append(subscription) }
    listLock.unlock()
    if subscription.isTargetOwned {
      targetOwnedCount += 1
      keepAlive = self
    }
    // Without a latest value the upstream's initial value is still to come; it is broadcast to
    // everyone who joined before it, this subscriber included.
    var drainNow = false
    if hasLatest {
      drainNow = lane.submit(latest.pointee, tag: Self.replayTag)
    }
    let mustConnect = upstream == nil && !isConnecting
    if mustConnect { isConnecting = true }
    let generation = connection
    lock.unlock()
    if drainNow { lane.drain() }
    if mustConnect { connect(generation) }
  }

  /// Registers on the upstream observable; its initial value is broadcast like a change.
  private func connect(_ generation: UInt64) {
    var generation = generation
    while true {
      let current = generation
      let token = connectUpstream { [weak self] value in
        self?.receive(value, connection: current)
      }
      lock.lock()
      if subscriptions.isEmpty {
        isConnecting = false
        let dropped = takeLatest()
        lock.unlock()
        withExtendedLifetime(dropped) {}
        token.cancel()
        return
      }
      if connection == generation {
        upstream = token
        isConnecting = false
        lock.unlock()
        return
      }
      // Everyone left and someone came back while the registration was being made: its
      // callbacks are ignored now, so register again.
      generation = connection
      let dropped = takeLatest()
      lock.unlock()
      withExtendedLifetime(dropped) {}
      token.cancel()
    }
  }

  /// Lock held: empties `latest`, returning its value for the caller to release after
  /// unlocking (a value's deinit is user code).
  private func takeLatest() -> Value? {
    guard hasLatest else { return nil }
    hasLatest = false
    return latest.move()
  }

  /// An upstream change, on the thread that delivers it.
  private func receive(_ value: Value, connection generation: UInt64) {
    // The value this replaces as the latest ends up here, to be released after unlocking: a
    // value's deinit is user code.
    var previous = value
    // With coalescing, the waiting change this one replaces, likewise.
    var replaced = value
    lock.lock()
    guard generation == connection else {
      lock.unlock()
      return
    }
    sequence &+= 1
    if hasLatest {
      swap(&previous, &latest.pointee)
    } else {
      latest.initialize(to: value)
      hasLatest = true
    }
    let drainNow: Bool
    if targetOwnedCount > 0 {
      drainNow = submitEndingLostTargets(value, replaced: &replaced)
    } else {
      drainNow = !subscriptions.isEmpty && submit(value, replaced: &replaced)
      lock.unlock()
    }
    withExtendedLifetime(previous) {}
    withExtendedLifetime(replaced) {}
    if drainNow { lane.drain() }
  }

  /// Lock held: queues `value` for the subscribers, by the driver's policy.
  @inline(__always)
  private func submit(_ value: Value, replaced: inout Value) -> Bool {
    switch policy {
    case .everyValue: lane.submit(value, tag: sequence)
    case .coalescing: submitMerging(value, replaced: &replaced)
    }
  }

  /// ``receive(_:connection:)`` with target-owned drives, lock held: ends those whose target is
  /// gone, queues `value` for the others, then unlocks and releases what the ended ones held.
  ///
  /// Out of line: the release it builds costs metadata look-ups that the common change, which
  /// has no target-owned drive, should not pay.
  @inline(never)
  private func submitEndingLostTargets(_ value: Value, replaced: inout Value) -> Bool {
    var ended: [Subscription] = []
    for subscription in subscriptions where subscription.hasLostTarget {
      ended.append(subscription)
    }
    let drainNow = subscriptions.count > ended.count && submit(value, replaced: &replaced)
    let released = end(ended)
    lock.unlock()
    released.finish()
    return drainNow
  }

  /// Lock held: queues `value` as the latest change (coalescing), in place of a change that
  /// still waits, which goes to `replaced` for the caller to release after unlocking.
  ///
  /// Out of line: the optional it needs costs a metadata look-up on entry to any function that
  /// declares one, which the `.everyValue` path should not pay.
  @inline(never)
  private func submitMerging(_ value: Value, replaced: inout Value) -> Bool {
    var waiting: Value?
    let drainNow = lane.submit(
      value, tag: sequence, merging: Self.isMergeable, replaced: &waiting)
    if let waiting { replaced = waiting }
    return drainNow
  }

  /// Whether a new change replaces the waiting item (coalescing): replays are never merged.
  private static func isMergeable(_ waiting: UInt64, _ new: UInt64) -> Bool {
    waiting & replayTag == 0 && new & replayTag == 0
  }

  /// One queued item, on the main queue.
  /// Delivers the value `value` points to, a `Value`, on the main queue: through a pointer, so
  /// that the list's code is not generic.
  private func deliver(_ value: UnsafeRawPointer, tag: UInt64) {
    if tag & Self.replayTag != 0 {
      listLock.lock()
      let subscription = pendingReplays.removeFirst()
      listLock.unlock()
      call(subscription, with: value)
      return
    }
    // Snapshot under the list's lock, filter outside it. `joined` never changes once the
    // subscription is in the list.
    listLock.lock()
    let candidates = subscriptions
    listLock.unlock()
    for subscription in candidates where subscription.joined < tag {
      call(subscription, with: value)
    }
  }

  private func call(_ subscription: Subscription, with value: UnsafeRawPointer) {
    // Read under the lock: a callback earlier in this turn may have cancelled it.
    listLock.lock()
    let isActive = subscription.isActive
    listLock.unlock()
    guard isActive else { return }
    if subscription.hasLostTarget {
      removeSubscriptions { $0 === subscription }
      return
    }
    subscription.send(value)
  }

  private func removeSubscriptions(where shouldRemove: (Subscription) -> Bool) {
    lock.lock()
    let released = end(subscriptions.filter(shouldRemove))
    lock.unlock()
    released.finish()
  }

  /// Ends `ended` and disconnects when no subscriber is left. Lock held; the caller calls
  /// `finish()` on the result once it has unlocked, since cancelling the upstream registration
  /// and releasing the driver must not happen under the driver's own lock.
  private func end(_ ended: [Subscription]) -> Released {
    // The ended subscriptions hold user closures: they are released with `released`, after
    // unlocking, never here.
    var released = Released(subscriptions: ended)
    guard !ended.isEmpty else { return released }
    listLock.lock()
    for subscription in ended where subscription.isActive {
      subscription.isActive = false
      if subscription.isTargetOwned { targetOwnedCount -= 1 }
    }
    subscriptions.removeAll { !$0.isActive }
    let isEmpty = subscriptions.isEmpty
    listLock.unlock()
    if targetOwnedCount == 0 {
      released.driver = keepAlive
      keepAlive = nil
    }
    if isEmpty {
      released.upstream = upstream
      upstream = nil
      released.latest = takeLatest()
      connection &+= 1
    }
    return released
  }

  /// What a removal lets go of, released outside the lock.
  /// What ending subscriptions lets go of, released by `finish()` after unlocking.
  private struct Released {
    var subscriptions: [Subscription]
    var upstream: ObservationToken?
    var driver: Driver<Value>?
    var latest: Value?

    consuming func finish() {
      Lock.assertNotHeld("A subscription was released")
      upstream?.cancel()
      upstream = nil
      subscriptions = []
      latest = nil
      driver = nil
    }
  }
}

// Every mutable property is guarded by `lock` or `listLock` as marked; `latest` points to storage
// guarded by `lock`; `lane` is written once, in `init`. `connectUpstream` is called by one thread
// at a time (the one that set `isConnecting` under `lock`), and the subscriptions' handlers only
// by the lane's delivery, on the main queue, one value at a time.
extension Driver: @unchecked Sendable where Value: Sendable {}

extension Driver: RegistrationRemoving {
  func removeRegistration(identifiedBy token: AnyObject) {
    let identity = Self.identity(of: token)
    removeSubscriptions { $0.tokenIdentity == identity }
  }
}

/// The driver a lane delivers to, held weakly because a queued turn may outlive it.
///
/// `@unchecked Sendable` without a lock: `driver` is written once, in the driver's `init`,
/// before anything is submitted to the lane that reads it, and a weak load is atomic.
private final class WeakDriver<Value>: @unchecked Sendable {
  // Written once, before the lane can run a turn.
  weak var driver: Driver<Value>?
}
