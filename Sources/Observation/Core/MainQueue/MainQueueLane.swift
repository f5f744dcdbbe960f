import Dispatch

/// A serial line of work items delivered on a ``MainScheduler``'s main queue, in order, through
/// a ``MainQueueMailbox``, which schedules the main-queue turns and orders the lane's items
/// among those of the other lanes that share it (every observable's main-actor lane on one main
/// queue; a driver's or a binder's lane has a mailbox of its own). See the mailbox for when an
/// item is delivered at once and when it waits for a turn.
///
/// A turn takes a run of the lane's waiting items (a segment of the mailbox) in one step under
/// the lock and delivers them without it, so a producer and the main queue meet on the lock
/// once per segment, not once per item. Each item carries a tag of a type that is not generic
/// (a driver's sequence number, a main-actor call's target and options): the owners' items
/// would otherwise be a generic enum or struct built around their value, and in this
/// unspecialized code every use of such a type costs a metadata look-up, while `Item` and `Tag`
/// come with the lane.
///
/// Thread-safe. ``submit(_:tag:)`` and ``submit(_:tag:merging:replaced:)`` may be called under
/// the caller's own lock: they never run user code or release an item, they only report whether
/// the caller must call ``drain(withinFrameBudget:)`` once it has unlocked.
///
/// `@unchecked Sendable`: `items` is guarded by the mailbox's lock. `spare`, and calls of
/// `deliverer` and of the closure it returns (which may be a main-actor one), belong to the
/// thread that holds the mailbox's delivery, on the scheduler's main queue, one item at a time.
/// `inlineRound` is a `let`; its state belongs to the thread delivering the observable's round
/// (see `InlineRound`).
final class MainQueueLane<Item, Tag>: @unchecked Sendable {
  let mailbox: MainQueueMailbox
  /// Called once per segment, on the main queue: what delivers the segment's items, or `nil`
  /// when their receiver is gone (the items are then dropped). What it returns is released,
  /// without the lock, before the next segment. Once per segment, so that an owner that the
  /// lane holds weakly pays its weak load once per segment, not once per item. The items and
  /// tags are lent to it in place, through pointers valid for the call: a copy of a tag that
  /// holds a weak reference costs two atomic operations on the referenced object.
  private let deliverer: () -> ((UnsafePointer<Item>, UnsafePointer<Tag>) -> Void)?
  /// The waiting items and their tags, oldest first. Guarded by the mailbox's lock.
  @exclusivity(unchecked) private var items = LaneBuffer<Item, Tag>(capacity: 16)
  /// The segment being delivered, taken from `items` in one step; between segments, an empty
  /// buffer kept for the next one, so that a steady producer does not reallocate, or what a
  /// turn that ran out of frame budget left of its segment, which the mailbox delivers first.
  /// Used by the thread that holds the mailbox's delivery, and swapped with `items` under the
  /// lock.
  @exclusivity(unchecked) private var spare = LaneBuffer<Item, Tag>(capacity: 16)
  /// Set by ``beginRound()`` when an observable's round runs on the main queue with the mailbox
  /// idle, until ``endRound()``: the round then calls its main-actor callbacks directly.
  let inlineRound = InlineRound()

  /// - Parameters:
  ///   - mailbox: What orders and schedules the lane's deliveries.
  ///   - deliverer: Called on the scheduler's main queue once per segment of items; what it
  ///     returns is called with each item of the segment and its tag, one at a time, in order,
  ///     through pointers valid for the call. It returns `nil` to drop the segment.
  init(
    mailbox: MainQueueMailbox,
    deliverer: @escaping () -> ((UnsafePointer<Item>, UnsafePointer<Tag>) -> Void)?
  ) {
    self.mailbox = mailbox
    self.deliverer = deliverer
  }

  /// A lane with a mailbox of its own.
  ///
  /// - Parameters:
  ///   - scheduler: Where items are delivered.
  ///   - latestPerTurn: Whether a turn delivers only what waits when it starts (see
  ///     ``MainQueueMailbox``); for lanes whose submissions merge.
  ///   - deliverer: As for ``init(mailbox:deliverer:)``.
  convenience init(
    scheduler: MainScheduler,
    latestPerTurn: Bool = false,
    deliverer: @escaping () -> ((UnsafePointer<Item>, UnsafePointer<Tag>) -> Void)?
  ) {
    self.init(
      mailbox: MainQueueMailbox(scheduler: scheduler, latestPerTurn: latestPerTurn),
      deliverer: deliverer)
  }

  deinit {
    // Nothing else can reach the lane now (a segment of the mailbox would hold it): releasing
    // its items runs no user code under a lock.
    items.removeAll()
    items.deallocate()
    spare.removeAll()
    spare.deallocate()
  }

  /// The scheduler the lane delivers on.
  var scheduler: MainScheduler { mailbox.scheduler }

  /// How many main-queue turns the lane's mailbox has scheduled so far.
  var hopCount: Int { mailbox.hopCount }

  /// Queues `item` with `tag`. If `merging` returns `true` for the tags of the last waiting item
  /// and of this one, the item is taken as merged into it instead (the coalescing policy), and
  /// the item it replaced goes to `replaced`, for the caller to release after unlocking.
  ///
  /// - Returns: `true` when the caller is on the main queue and the mailbox was idle: it must
  ///   then call ``drain(withinFrameBudget:)`` (after releasing its own lock) to deliver the
  ///   item at once.
  func submit(
    _ item: consuming Item,
    tag: consuming Tag,
    merging: (Tag, Tag) -> Bool,
    replaced: inout Item?
  ) -> Bool {
    mailbox.lock.lock()
    if !items.isEmpty, merging(items.lastTag, tag) {
      replaced = items.replaceLast(item, tag)
      mailbox.recordMerge()
      mailbox.lock.unlock()
      return false
    }
    items.append(item, tag)
    return mailbox.recordSubmission(of: self)
  }

  /// Queues `item` with `tag`, like ``submit(_:tag:merging:replaced:)`` without merging.
  func submit(_ item: consuming Item, tag: consuming Tag) -> Bool {
    mailbox.lock.lock()
    items.append(item, tag)
    return mailbox.recordSubmission(of: self)
  }

  /// Runs `body` at once, as the mailbox's delivery, when the caller is on the main queue and
  /// nothing waits or is being delivered: the common case of a main-actor observer whose round
  /// runs on the main thread, without touching the queue. Returns `false` (and runs nothing)
  /// otherwise; the caller then submits the item.
  func deliverInlineIfIdle(_ body: () -> Void) -> Bool {
    guard mailbox.beginInlineDelivery() else { return false }
    body()
    mailbox.endInlineDelivery()
    return true
  }

  /// Called by an observable's round before its callbacks, once per round: when the round runs
  /// on the main queue and nothing waits or is being delivered, the mailbox is taken for the
  /// whole round and ``inlineRound`` is set, so each main-actor callback of the round runs at
  /// once without asking the mailbox again.
  ///
  /// - Returns: Whether the round calls the lane's callbacks inline.
  func beginRound() -> Bool {
    guard mailbox.beginInlineDelivery() else { return false }
    inlineRound.isSet = true
    return true
  }

  /// Called by the round after its callbacks: gives the mailbox back, delivering first what was
  /// queued meanwhile.
  func endRound() {
    guard inlineRound.isSet else { return }
    inlineRound.isSet = false
    mailbox.endInlineDelivery()
  }

  /// Delivers the waiting items of the lane's mailbox (see
  /// ``MainQueueMailbox/drain(withinFrameBudget:)``); called on the main queue by the thread
  /// whose submission returned `true`.
  func drain(withinFrameBudget: Bool = true) {
    mailbox.drain(withinFrameBudget: withinFrameBudget)
  }

  /// Delivers the first `count` items of `spare`, the lock not held, until the frame budget
  /// counted from `budgetStart` (if any) is spent. A function of its own so that the closure
  /// `deliverer` returned for the segment, and what it holds, is released before it returns:
  /// the caller takes the lock next.
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
        DispatchTime.now().uptimeNanoseconds &- budgetStart
          > MainQueueMailbox.frameBudgetNanoseconds
      {
        break
      }
    }
    return delivered
  }
}

extension MainQueueLane: MailboxLane {
  func deliver(_ count: Int, budgetStart: UInt64?, of mailbox: MainQueueMailbox) -> Int {
    // `spare` holds what a turn left of this segment, or is empty: then the segment's items are
    // the oldest `count` of `items`, all of them unless a later segment of the lane waits too.
    if spare.isEmpty {
      if count == items.count { swap(&items, &spare) } else { items.moveFirst(count, to: &spare) }
    }
    mailbox.lock.unlock()
    let delivered = deliverBatch(count: count, budgetStart: budgetStart)
    // Released here, without the lock: an item's deinit may be user code.
    spare.removeFirst(delivered)
    if spare.isEmpty { spare.shrink(toAtMost: WorkQueue<Item>.retainedCapacity, keeping: 16) }
    return spare.count
  }
}

extension MainQueueLane where Tag == UInt64 {
  /// A lane whose items need no tag.
  ///
  /// - Parameters:
  ///   - scheduler: Where items are delivered.
  ///   - deliver: Called with each item on the scheduler's main queue, one at a time, in order.
  convenience init(
    scheduler: MainScheduler,
    deliver: @escaping (Item) -> Void
  ) {
    let deliverTagged: (UnsafePointer<Item>, UnsafePointer<UInt64>) -> Void = { item, _ in
      deliver(item.pointee)
    }
    self.init(scheduler: scheduler) { deliverTagged }
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
  /// The target of the last main-actor call queued in the lane (see `MainActorCall.target`),
  /// for comparison only. Read and written, like `isSet`, only by the thread delivering the
  /// observable, in the observable's order of rounds.
  @exclusivity(unchecked) var lastQueuedTarget: ObjectIdentifier?
}
