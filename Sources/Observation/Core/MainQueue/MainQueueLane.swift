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
/// A scheduled turn delivers every item it finds waiting, including items that arrive while it
/// delivers, until the lane is empty or a frame's worth of time (``frameBudgetNanoseconds``) has
/// passed: then it schedules another turn for the rest, so neither a fast producer nor a backlog
/// of a million values can hold the main queue for longer than a frame, and a producer that
/// keeps the lane busy costs one hop per frame, not one per value. On the real main queue, a
/// turn that its producer fed while it delivered also lets items gather when fewer arrived
/// during a batch than it held and, once the lane is empty, waits some microseconds for the next item before it ends
/// (``awaitsSubmission()``): a turn faster than its producer would otherwise end every few
/// dozen values, and each next value would pay a hop. A lane made with `latestPerTurn` (a
/// coalescing driver's) instead delivers only what waits when it takes it, which merging has
/// reduced to the latest value; on the real main queue its turn first waits, briefly, while its
/// producer keeps replacing that value (``gatherLatest()``).
///
/// The turn takes the waiting items in one step under the lock and delivers them without it, so
/// a producer and the main queue meet on the lock once per batch, not once per item. Each item
/// carries a tag of a type that is not generic (a driver's sequence number, a main-actor call's
/// target and options): the owners' items would otherwise be a generic enum or struct built
/// around their value, and in this unspecialized code every use of such a type costs a metadata
/// look-up, while `Item` and `Tag` come with the lane.
///
/// Thread-safe. ``submit(_:tag:)`` and ``submit(_:tag:merging:replaced:)`` may be called under
/// the caller's own lock: they never run user code or release an item, they only report whether
/// the caller must call ``drain(withinFrameBudget:)`` once it has unlocked.
///
/// `@unchecked Sendable`: every mutable property but `spare` is guarded by `lock`. `spare`, and
/// calls of `deliverer` and of the closure it returns (which may be a main-actor one), belong to
/// the thread that holds the lane's delivery (`isDraining`, taken and given back under `lock`),
/// on the scheduler's main queue, one item at a time. `inlineRound` is a `let`; its state belongs
/// to the thread delivering the observable's round (see `InlineRound`).
final class MainQueueLane<Item, Tag>: @unchecked Sendable {
  let scheduler: MainScheduler
  /// Called once per batch, on the main queue: what delivers the batch's items, or `nil` when
  /// their receiver is gone (the items are then dropped). What it returns is released, without
  /// the lock, before the next batch. Once per batch, so that an owner that
  /// the lane holds weakly pays its weak load once per batch, not once per item. The items and
  /// tags are lent to it in place, through pointers valid for the call: a copy of a tag that
  /// holds a weak reference costs two atomic operations on the referenced object.
  private let deliverer: () -> ((UnsafePointer<Item>, UnsafePointer<Tag>) -> Void)?
  private let lock = Lock()
  /// The waiting items and their tags, oldest first.
  @exclusivity(unchecked) private var items = LaneBuffer<Item, Tag>(capacity: 16)
  /// The batch being delivered, taken from `items` in one step; between batches, an empty
  /// buffer kept for the next one, so that a steady producer does not reallocate, or what a
  /// turn that ran out of frame budget left of its batch, which goes before `items`. Used by
  /// the thread that holds the lane's delivery (`isDraining`), and swapped with `items` under
  /// the lock.
  @exclusivity(unchecked) private var spare = LaneBuffer<Item, Tag>(capacity: 16)
  /// How many items wait, in `items` and left in `spare`: kept apart from them so that the
  /// inline fast path touches no generic storage.
  @exclusivity(unchecked) private var waitingCount = 0
  /// Set while a main-queue turn is scheduled for the lane.
  @exclusivity(unchecked) private var isScheduled = false
  /// Set while the main queue delivers the lane's items.
  @exclusivity(unchecked) private var isDraining = false
  /// Set while a coalescing turn waits for its producer before it takes the latest value (see
  /// ``gatherLatest()``): submissions merge into the waiting item, which the turn takes.
  @exclusivity(unchecked) private var isGathering = false
  /// Counts submissions, merged ones included: a gathering turn tells from it whether its
  /// producer is still replacing the value.
  @exclusivity(unchecked) private var submissions: UInt = 0
  private let deliversBacklogInline: Bool
  private let latestPerTurn: Bool
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
  ///   - latestPerTurn: Whether a turn delivers only what waits when it starts (see the type's
  ///     discussion); for lanes whose submissions merge.
  ///   - deliverer: Called on the scheduler's main queue once per batch of items; what it
  ///     returns is called with each item of the batch and its tag, one at a time, in order,
  ///     through pointers valid for the call. It returns `nil` to drop the batch.
  init(
    scheduler: MainScheduler,
    deliversBacklogInline: Bool = false,
    latestPerTurn: Bool = false,
    deliverer: @escaping () -> ((UnsafePointer<Item>, UnsafePointer<Tag>) -> Void)?
  ) {
    self.scheduler = scheduler
    self.deliversBacklogInline = deliversBacklogInline
    self.latestPerTurn = latestPerTurn
    self.deliverer = deliverer
  }

  deinit {
    // Nothing else can reach the lane now: releasing its items runs no user code under a lock.
    items.removeAll()
    items.deallocate()
    spare.removeAll()
    spare.deallocate()
    lock.deallocate()
  }

  /// How many main-queue turns the lane has scheduled so far.
  var hopCount: Int {
    lock.withLock { hops }
  }

  /// Queues `item` with `tag`. If `merging` returns `true` for the tags of the last waiting item
  /// and of this one, the item is taken as merged into it instead (the coalescing policy), and
  /// the item it replaced goes to `replaced`, for the caller to release after unlocking.
  ///
  /// - Returns: `true` when the caller is on the main queue and the lane was idle: it must then
  ///   call ``drain(withinFrameBudget:)`` (after releasing its own lock) to deliver the item at
  ///   once.
  func submit(
    _ item: consuming Item,
    tag: consuming Tag,
    merging: (Tag, Tag) -> Bool,
    replaced: inout Item?
  ) -> Bool {
    lock.lock()
    submissions &+= 1
    if !items.isEmpty, merging(items.lastTag, tag) {
      replaced = items.replaceLast(item, tag)
      lock.unlock()
      return false
    }
    items.append(item, tag)
    return finishSubmission()
  }

  /// Queues `item` with `tag`, like ``submit(_:tag:merging:replaced:)`` without merging.
  func submit(_ item: consuming Item, tag: consuming Tag) -> Bool {
    lock.lock()
    items.append(item, tag)
    return finishSubmission()
  }

  /// Ends a submission whose item was appended, entered with the lock held: takes the lane for
  /// the caller on the main queue, or schedules a turn, which is queued after unlocking.
  private func finishSubmission() -> Bool {
    waitingCount += 1
    if isDraining && latestPerTurn && !isGathering {
      // A coalescing turn delivers only what it took: the next turn is queued now, not when
      // this one ends, so that it runs before a `DispatchQueue.main.sync` made after this set.
      unlockSchedulingTurn()
      return false
    }
    if isDraining || (isScheduled && !deliversBacklogInline) {
      lock.unlock()
      return false
    }
    if scheduler.isCurrent {
      isDraining = true
      lock.unlock()
      return true
    }
    unlockSchedulingTurn()
    return false
  }

  /// Runs `body` at once, as the lane's delivery, when the caller is on the main queue and
  /// nothing waits or is being delivered: the common case of a main-actor observer whose round
  /// runs on the main thread, without touching the queue. Returns `false` (and runs nothing)
  /// otherwise; the caller then submits the item.
  func deliverInlineIfIdle(_ body: () -> Void) -> Bool {
    // Asked first, without the lock: the answer depends on the calling thread only, and a
    // producer on another thread then leaves the lock to `submit`.
    guard scheduler.isCurrent else { return false }
    lock.lock()
    guard !isDraining, waitingCount == 0, !(isScheduled && !deliversBacklogInline) else {
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
    // Asked first, without the lock, as in `deliverInlineIfIdle`: a round on another thread
    // does not take the lane's lock here.
    guard scheduler.isCurrent else { return false }
    lock.lock()
    defer { lock.unlock() }
    guard !isDraining, waitingCount == 0, !(isScheduled && !deliversBacklogInline) else {
      return false
    }
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
  /// ``submit(_:tag:merging:replaced:)`` or ``submit(_:tag:)``.
  ///
  /// It delivers the items waiting when it starts (later ones are a scheduled turn's), and it
  /// yields the main queue after ``frameBudgetNanoseconds``.
  ///
  /// - Parameter withinFrameBudget: `false` for a drain a round on the main queue starts: the
  ///   round's own call is among the items, and a set made on the main thread is delivered to
  ///   main-actor callbacks, after every earlier background change, before it returns.
  func drain(withinFrameBudget: Bool = true) {
    drain(withinFrameBudget: withinFrameBudget, isTurn: false)
  }

  /// Delivers batches of waiting items, the lane taken (`isDraining`), the lock not held.
  ///
  /// A turn (`isTurn`) goes on with the items that arrived while it delivered, unless the lane
  /// is `latestPerTurn`; a drain started by a submission delivers one batch. Either way, what is
  /// left when the frame budget is spent, or after the last batch, goes to a scheduled turn.
  private func drain(withinFrameBudget: Bool, isTurn: Bool) {
    // The lane only drains on its main queue: a submission found it current, or a turn was
    // queued there. Checked once per drain, so that each delivery need not ask again.
    if case .main = scheduler.kind { MainActor.assumeIsolated {} }
    let runsInline = scheduler.runsInline
    let isBudgeted = withinFrameBudget && !runsInline
    let start = isBudgeted ? DispatchTime.now().uptimeNanoseconds : 0
    var batches = 0
    // Only a turn of the real main queue, fed by other threads, paces itself on its producer
    // (see `pause()`); a test scheduler's turns stay step by step.
    let paces: Bool
    if isTurn, !latestPerTurn, case .main = scheduler.kind { paces = true } else { paces = false }
    lock.lock()
    while true {
      // The batch goes to `spare`, which only this thread uses until it gives the lane back,
      // unless `spare` still holds what a turn left, which goes first.
      if spare.isEmpty { swap(&items, &spare) }
      let count = spare.count
      waitingCount -= count
      lock.unlock()
      let delivered = deliverBatch(count: count, budgetStart: isBudgeted ? start : nil)
      // Released here, without the lock: an item's deinit may be user code.
      spare.removeFirst(delivered)
      lock.lock()
      if !spare.isEmpty {
        // Out of budget: the rest stays in `spare` and goes first in the next turn.
        waitingCount += spare.count
        isDraining = false
        unlockSchedulingTurn()
        return
      }
      spare.shrink(toAtMost: WorkQueue<Item>.retainedCapacity, keeping: 16)
      batches += 1
      if paces, waitingCount < count {
        // Fewer items arrived while the batch was delivered than it held: the turn is faster
        // than its producer, and would soon take items one or two at a time, meeting the
        // producer on the lock (and on the buffer's memory) once per item. Letting more gather
        // first keeps that once per batch.
        lock.unlock()
        Self.pause()
        lock.lock()
      }
      if waitingCount == 0 {
        // A producer that fed the turn while it delivered (more than one batch) is likely to
        // set again within microseconds: waiting that long for it costs the main queue less
        // than ending the turn, which makes the producer's next set pay a main-queue hop (a
        // wake-up of the main thread) and its values wait for that hop.
        let lingers =
          paces && batches > 1
          && DispatchTime.now().uptimeNanoseconds &- start <= Self.frameBudgetNanoseconds
        if lingers, awaitsSubmission() { continue }
        isDraining = false
        lock.unlock()
        return
      }
      let goesOn =
        runsInline
        || (isTurn && !latestPerTurn
          && DispatchTime.now().uptimeNanoseconds &- start <= Self.frameBudgetNanoseconds)
      if goesOn { continue }
      isDraining = false
      unlockSchedulingTurn()
      return
    }
  }

  /// Delivers the first `count` items of `spare`, the lock not held, until the frame budget
  /// counted from `budgetStart` (if any) is spent. A function of its own so that the closure
  /// `deliverer` returned for the batch, and what it holds, is released before it returns: the
  /// caller takes the lock next.
  ///
  /// - Returns: How many items were delivered (all of them when `deliverer` returns `nil`).
  private func deliverBatch(count: Int, budgetStart: UInt64?) -> Int {
    guard let deliver = deliverer() else { return count }
    var delivered = 0
    // Lent to `deliver` in place, not copied.
    while delivered < count {
      let (item, tag) = spare.element(at: delivered)
      deliver(item, tag)
      delivered += 1
      if let budgetStart, delivered < count,
        DispatchTime.now().uptimeNanoseconds &- budgetStart > Self.frameBudgetNanoseconds
      {
        break
      }
    }
    return delivered
  }

  /// How many times a turn yields the processor to let items gather, or between two checks
  /// for a submission while it lingers: a yield lets the producer run even on the main
  /// thread's core, where a spin would keep it from running.
  private static var yieldsPerPause: Int { 4 }
  /// The longest a turn that ran out of items waits for the next one: it checks again after
  /// each pause until then. A yield on a loaded core can hand another thread a whole time
  /// slice; the main queue pays that at most once per turn.
  private static var lingeringNanoseconds: UInt64 { 50_000 }

  /// Lets other threads run for a few microseconds, the lock not held.
  private static func pause() {
    for _ in 0..<yieldsPerPause { ThreadID.yieldProcessor() }
  }

  /// Waits briefly for a submission, the lane still taken (`isDraining`, so a producer's
  /// submission schedules no turn meanwhile), checking under the lock after each pause only,
  /// so that the producer rarely meets it there. Entered and left with the lock held.
  ///
  /// - Returns: Whether an item arrived.
  private func awaitsSubmission() -> Bool {
    let start = DispatchTime.now().uptimeNanoseconds
    repeat {
      lock.unlock()
      Self.pause()
      lock.lock()
      if waitingCount > 0 { return true }
    } while DispatchTime.now().uptimeNanoseconds &- start < Self.lingeringNanoseconds
    return false
  }

  /// A scheduled main-queue turn: delivers what is waiting, unless the main queue is already
  /// delivering this lane (the turn came while an inline delivery ran) or did so meanwhile.
  private func runTurn() {
    lock.lock()
    isScheduled = false
    guard !isDraining, waitingCount > 0 else {
      lock.unlock()
      return
    }
    isDraining = true
    if latestPerTurn, case .main = scheduler.kind { gatherLatest() }
    lock.unlock()
    drain(withinFrameBudget: true, isTurn: true)
  }

  /// Lets a coalescing turn on the real main queue wait, before it takes the latest value, for
  /// as long as its producer keeps replacing that value, up to ``lingeringNanoseconds``:
  /// without it, a main thread faster than the producer takes a value every few sets, each the
  /// producer's next set pays a main-queue hop for, and a screen cannot show them anyway.
  /// Submissions meanwhile merge into the waiting value, which this turn delivers, so a
  /// `DispatchQueue.main.sync` made after a set still runs after its value was delivered.
  /// Entered and left with the lock held; the lane is taken (`isDraining`).
  private func gatherLatest() {
    isGathering = true
    defer { isGathering = false }
    let start = DispatchTime.now().uptimeNanoseconds
    var seen = submissions
    repeat {
      lock.unlock()
      Self.pause()
      lock.lock()
      // The producer set nothing during the pause: it has stopped, or is slower than a
      // screen needs; deliver what waits.
      guard submissions != seen else { return }
      seen = submissions
    } while DispatchTime.now().uptimeNanoseconds &- start < Self.lingeringNanoseconds
  }

  /// Entered with the lock held, for items that wait: unless a turn is scheduled already, marks
  /// one scheduled and counts its hop; then unlocks and queues it, after unlocking because a
  /// main thread woken while the lane's lock is still held would only block on it. At once,
  /// never later: a turn delayed to pace a fast producer would run after a
  /// `DispatchQueue.main.sync` made meanwhile, which code that waits for the main queue to
  /// deliver what it queued (examples, tests) relies on.
  ///
  /// Never called for `.immediate`: on that scheduler the caller is always "on the main queue"
  /// and drains inline instead.
  private func unlockSchedulingTurn() {
    let mustEnqueue = !isScheduled
    if mustEnqueue {
      hops += 1
      isScheduled = true
    }
    lock.unlock()
    if mustEnqueue { scheduler.enqueue { self.runTurn() } }
  }
}

extension MainQueueLane where Tag == UInt64 {
  /// A lane whose items need no tag.
  ///
  /// - Parameters:
  ///   - scheduler: Where items are delivered.
  ///   - deliversBacklogInline: Whether a submission on the main queue delivers a backlog that
  ///     waits for a scheduled turn at once (see the type's discussion).
  ///   - deliver: Called with each item on the scheduler's main queue, one at a time, in order.
  convenience init(
    scheduler: MainScheduler,
    deliversBacklogInline: Bool = false,
    deliver: @escaping (Item) -> Void
  ) {
    let deliverTagged: (UnsafePointer<Item>, UnsafePointer<UInt64>) -> Void = { item, _ in
      deliver(item.pointee)
    }
    self.init(scheduler: scheduler, deliversBacklogInline: deliversBacklogInline) {
      deliverTagged
    }
  }

  /// Queues `item` with the tag 0, like ``submit(_:tag:)``.
  func submit(_ item: consuming Item) -> Bool {
    submit(item, tag: 0)
  }
}

/// The part of a main-actor lane an observable's round uses, without its item type: the round
/// code is generic over the observable's value only, and a lane of any item type can take part.
protocol RoundLane: AnyObject {
  func beginRound() -> Bool
  func endRound()
  /// Whether the calling code runs on the lane's main queue, where a round would call the
  /// lane's callbacks inline.
  var isOnItsQueue: Bool { get }
}

extension MainQueueLane: RoundLane {
  var isOnItsQueue: Bool { scheduler.isCurrent }
}

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
  /// The target of the last main-actor call queued in the lane (see `MainActorCall.target`),
  /// for comparison only. Read and written, like `isSet`, only by the thread delivering the
  /// observable, in the observable's order of rounds.
  @exclusivity(unchecked) var lastQueuedTarget: ObjectIdentifier?
}
