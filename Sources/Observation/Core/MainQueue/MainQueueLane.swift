import Dispatch

/// A serial line of work items delivered on a ``MainScheduler``'s main queue, in order.
///
/// The rule that keeps order (the pending counter of RxSwift's MainScheduler and ReactiveSwift's
/// UIScheduler, kept per lane): an item submitted elsewhere than on the main queue joins the
/// queue, and one main-queue turn scheduled for the lane delivers it; at most one turn is
/// outstanding per lane. An item submitted on the main queue while the lane is idle is delivered
/// at once. While the lane is delivering (a submission from inside a delivery, re-entrantly) it
/// is delivered after the current one, never nested inside it. While a turn is scheduled, it
/// waits for that turn (a Driver's lane) or, with `deliversBacklogInline`, the main queue
/// delivers the backlog and the item at once, in order, and the turn finds the work done (a
/// main-actor observer's lane, so that a set on the main thread is delivered before it returns).
/// Either way a value set on the main queue never overtakes one queued earlier.
///
/// A turn delivers only the items queued when it starts, and at most a frame's worth of them
/// (``frameBudgetNanoseconds``): then it schedules another turn for the rest, so neither a fast
/// producer nor a backlog of a million values can hold the main queue for longer than a frame.
///
/// Thread-safe. ``submit(_:merging:replaced:)`` may be called under the caller's own lock: it
/// never runs user code or releases an item, it only reports whether the caller must call
/// ``drain()`` once it has unlocked.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`, and `deliver` (which may
/// be a main-actor closure) is only ever called on the scheduler's main queue, one item at a
/// time, by the thread that holds the lane's delivery (`isDraining`).
final class MainQueueLane<Item>: @unchecked Sendable {
  let scheduler: MainScheduler
  private let deliver: (Item) -> Void
  private let lock = Lock()
  @exclusivity(unchecked) private var items = WorkQueue<Item>()
  /// How many items wait: kept apart from `items` so that the inline fast path touches no
  /// generic storage (each use of it costs a metadata look-up in this unspecialized code).
  @exclusivity(unchecked) private var waitingCount = 0
  /// Set while a main-queue turn is scheduled for the lane.
  @exclusivity(unchecked) private var isScheduled = false
  /// Set while the main queue delivers the lane's items.
  @exclusivity(unchecked) private var isDraining = false
  private let deliversBacklogInline: Bool
  @exclusivity(unchecked) private var hops = 0
  /// Set by ``beginRound()`` when an observable's round runs on the main queue with the lane
  /// idle, until ``endRound()``: the round then calls its main-actor callbacks directly.
  let inlineRound = InlineRound()

  /// How long one main-queue turn may deliver before it yields: half a 60 Hz frame.
  static var frameBudgetNanoseconds: UInt64 { 8_000_000 }

  /// - Parameters:
  ///   - scheduler: Where items are delivered.
  ///   - deliversBacklogInline: Whether a submission on the main queue delivers a backlog that
  ///     waits for a scheduled turn at once (see the type's discussion).
  ///   - deliver: Called with each item on the scheduler's main queue, one at a time, in order.
  init(
    scheduler: MainScheduler,
    deliversBacklogInline: Bool = false,
    deliver: @escaping (Item) -> Void
  ) {
    self.scheduler = scheduler
    self.deliversBacklogInline = deliversBacklogInline
    self.deliver = deliver
  }

  deinit {
    lock.deallocate()
  }

  /// How many main-queue turns the lane has scheduled so far.
  var hopCount: Int {
    lock.withLock { hops }
  }

  /// Queues `item`. If `merging` returns `true` for the last waiting item, the item is taken as
  /// merged into it instead (the coalescing policy), and the item it replaced goes to
  /// `replaced`, for the caller to release after unlocking.
  ///
  /// - Returns: `true` when the caller is on the main queue and the lane was idle: it must then
  ///   call ``drain()`` (after releasing its own lock) to deliver the item at once.
  func submit(
    _ item: Item,
    merging: ((Item, Item) -> Bool)? = nil,
    replaced: inout Item?
  ) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    if let merging, let last = items.last, merging(last, item) {
      replaced = last
      items.last = item
      return false
    }
    items.append(item)
    waitingCount += 1
    if isDraining || (isScheduled && !deliversBacklogInline) { return false }
    if scheduler.isCurrent {
      isDraining = true
      return true
    }
    if !isScheduled { scheduleTurn() }
    return false
  }

  /// Queues `item`, like ``submit(_:merging:replaced:)`` without merging.
  func submit(_ item: Item) -> Bool {
    var none: Item?
    return submit(item, replaced: &none)
  }

  /// Runs `body` at once, as the lane's delivery, when the caller is on the main queue and
  /// nothing waits or is being delivered: the common case of a main-actor observer whose round
  /// runs on the main thread, without touching the queue. Returns `false` (and runs nothing)
  /// otherwise; the caller then submits the item.
  func deliverInlineIfIdle(_ body: () -> Void) -> Bool {
    lock.lock()
    guard !isDraining, waitingCount == 0, !(isScheduled && !deliversBacklogInline),
      scheduler.isCurrent
    else {
      lock.unlock()
      return false
    }
    isDraining = true
    lock.unlock()
    body()
    lock.lock()
    finishInlineDelivery()
    return true
  }

  /// Ends an inline delivery, entered with the lock held: gives the lane back, or first delivers
  /// the items submitted re-entrantly meanwhile, after the inline ones, still draining.
  private func finishInlineDelivery() {
    if waitingCount == 0 {
      isDraining = false
      lock.unlock()
    } else {
      lock.unlock()
      drain()
    }
  }

  /// Called by an observable's round before its callbacks, once per round: when the round runs
  /// on the main queue and nothing waits or is being delivered, the lane is taken for the whole
  /// round and ``inlineRound`` is set, so each main-actor callback of the round runs at once
  /// without asking the lane again.
  ///
  /// - Returns: Whether the round calls the lane's callbacks inline.
  func beginRound() -> Bool {
    lock.lock()
    defer { lock.unlock() }
    guard !isDraining, waitingCount == 0, !(isScheduled && !deliversBacklogInline),
      scheduler.isCurrent
    else { return false }
    isDraining = true
    inlineRound.isSet = true
    return true
  }

  /// Called by the round after its callbacks: gives the lane back, delivering first what was
  /// queued meanwhile.
  func endRound() {
    guard inlineRound.isSet else { return }
    lock.lock()
    inlineRound.isSet = false
    finishInlineDelivery()
  }

  /// Delivers the waiting items; called on the main queue by the thread that took the lane in
  /// ``submit(_:merging:replaced:)``.
  ///
  /// It delivers at most the items waiting when it starts (later ones are a later turn's), and
  /// a scheduled turn also yields the main queue after ``frameBudgetNanoseconds``.
  ///
  /// - Parameter withinFrameBudget: `false` for a drain a round on the main queue starts: the
  ///   round's own call is among the items, and a set made on the main thread is delivered to
  ///   main-actor callbacks, after every earlier background change, before it returns.
  func drain(withinFrameBudget: Bool = true) {
    let start = DispatchTime.now().uptimeNanoseconds
    lock.lock()
    var budget = items.count
    while true {
      while budget > 0, let item = items.popFirst() {
        budget -= 1
        waitingCount -= 1
        lock.unlock()
        deliver(item)
        lock.lock()
        if withinFrameBudget, !scheduler.runsInline,
          DispatchTime.now().uptimeNanoseconds &- start > Self.frameBudgetNanoseconds
        {
          break
        }
      }
      if items.isEmpty {
        isDraining = false
        lock.unlock()
        return
      }
      if scheduler.runsInline {
        budget = items.count
        continue
      }
      isDraining = false
      if !isScheduled { scheduleTurn() }
      lock.unlock()
      return
    }
  }

  /// A scheduled main-queue turn: delivers what is waiting, unless the main queue is already
  /// delivering this lane (the turn came while an inline delivery ran) or did so meanwhile.
  private func runTurn() {
    lock.lock()
    isScheduled = false
    guard !isDraining, !items.isEmpty else {
      lock.unlock()
      return
    }
    isDraining = true
    lock.unlock()
    drain()
  }

  /// Lock held. Never called for `.immediate`, whose `enqueue` would run the turn right here
  /// under the lock: on that scheduler the caller is always "on the main queue" and drains
  /// inline instead.
  private func scheduleTurn() {
    hops += 1
    isScheduled = true
    scheduler.enqueue { self.runTurn() }
  }
}

/// The part of a main-actor lane an observable's round uses, without its item type: the round
/// code is generic over the observable's value only, and a lane of any item type can take part.
protocol RoundLane: AnyObject {
  func beginRound() -> Bool
  func endRound()
}

extension MainQueueLane: RoundLane {}

/// Whether an observable's round is calling its main-actor callbacks inline (see
/// ``MainQueueLane/beginRound()``).
///
/// A class of its own, not a property of the generic lane, because reading a stored property of
/// a generic class from unspecialized code can cost a metadata look-up, which would be most of a
/// callback's cost here. Only the thread running the round reads it while it is set, and every
/// other reader comes after that round in the observable's order of rounds (which the
/// observable's lock establishes), so it needs no lock of its own.
final class InlineRound {
  @exclusivity(unchecked) var isSet = false
}
