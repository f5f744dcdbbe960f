import Dispatch

/// The order in which the items of one or more ``MainQueueLane``s are delivered on a
/// ``MainScheduler``'s main queue, and the scheduling of the main-queue turns that deliver them.
///
/// Every observable's main-actor lane on one main queue shares that queue's mailbox
/// (``forMainActor(on:)``): a lane's items wait in the lane, and the mailbox records, in the
/// order they were submitted, which lane each one belongs to, as runs of consecutive items of
/// one lane (*segments*). A turn delivers the segments in that order, so main-actor callbacks of
/// different observables run in the order their calls were made: a background thread that sets
/// `a`, `b`, `a` has `a`'s, `b`'s, then `a`'s main-actor callbacks called in that order. A
/// driver's or a binder's lane has a mailbox of its own, and so does every lane on
/// ``MainScheduler/immediate``, which is no queue of its own but whichever thread sends.
///
/// The rule that keeps order (the pending counter of RxSwift's MainScheduler and ReactiveSwift's
/// UIScheduler, kept per mailbox): an item submitted elsewhere than on the main queue joins the
/// mailbox, and one main-queue turn scheduled for the mailbox delivers it; at most one turn is
/// outstanding per mailbox. An item submitted on the main queue while the mailbox is idle is
/// delivered at once. While the mailbox is delivering (a submission from inside a delivery,
/// re-entrantly) it is delivered after the current one, never nested inside it. While a turn is
/// scheduled, it waits for that turn (a Driver's mailbox) or, with `deliversBacklogInline`, the
/// main queue delivers the backlog and the item at once, in order, and the turn finds the work
/// done (the main-actor mailbox, so that a set on the main thread is delivered before it
/// returns). Either way an item submitted on the main queue never overtakes one queued earlier.
///
/// A scheduled turn delivers every item it finds waiting, including items that arrive while it
/// delivers, until the mailbox is empty or a frame's worth of time (``frameBudgetNanoseconds``)
/// has passed: then it schedules another turn for the rest, so neither a fast producer nor a
/// backlog of a million values can hold the main queue for longer than a frame, and a producer
/// that keeps the mailbox busy costs one hop per frame, not one per value. On the real main
/// queue, a turn that its producer fed while it delivered also lets items gather when fewer
/// arrived during a batch than it held and, once the mailbox is empty, waits some microseconds
/// for the next item before it ends (``awaitsSubmission()``): a turn faster than its producer
/// would otherwise end every few dozen values, and each next value would pay a hop. A mailbox
/// made with `latestPerTurn` (a coalescing driver's) instead delivers only what waits when it
/// takes it, which merging has reduced to the latest value; on the real main queue its turn
/// first waits, briefly, while its producer keeps replacing that value (``gatherLatest()``).
///
/// Thread-safe. Its lanes' waiting items are guarded by its ``lock`` too, so that a submission
/// takes one lock. A lane submits under that lock, never runs user code there, and only reports
/// whether the submitter must call ``drain(withinFrameBudget:)`` once it has unlocked.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`, and the lanes' batches
/// belong to the thread that holds the mailbox's delivery (`isDraining`, taken and given back
/// under `lock`), on the scheduler's main queue.
final class MainQueueMailbox: @unchecked Sendable {
  /// A run of consecutive items of one lane, in submission order.
  private struct Segment {
    let lane: any MailboxLane
    var count: Int
  }

  let scheduler: MainScheduler
  let lock = Lock()
  private let deliversBacklogInline: Bool
  private let latestPerTurn: Bool
  /// The closed segments, oldest first.
  @exclusivity(unchecked) private var segments = WorkQueue<Segment>()
  /// The newest segment, which a submission of the same lane extends; kept apart from
  /// `segments`, and its lane compared by identity, so that extending it retains nothing.
  @exclusivity(unchecked) private var open: Segment?
  @exclusivity(unchecked) private var openLane: ObjectIdentifier?
  /// What a turn that ran out of frame budget left of a segment: it goes first.
  @exclusivity(unchecked) private var leftover: Segment?
  /// How many items wait, in all segments.
  @exclusivity(unchecked) private(set) var waitingCount = 0
  /// Set while a main-queue turn is scheduled for the mailbox.
  @exclusivity(unchecked) private var isScheduled = false
  /// Set while the main queue delivers the mailbox's items, or a lane's round calls its
  /// callbacks inline (``MainQueueLane/beginRound()``).
  @exclusivity(unchecked) private var isDraining = false
  /// Set while a coalescing turn waits for its producer before it takes the latest value (see
  /// ``gatherLatest()``): submissions merge into the waiting item, which the turn takes.
  @exclusivity(unchecked) private(set) var isGathering = false
  /// Counts submissions, merged ones included: a gathering turn tells from it whether its
  /// producer is still replacing the value.
  @exclusivity(unchecked) private var submissions: UInt = 0
  @exclusivity(unchecked) private var hops = 0
  /// How many inline deliveries are under way (see ``beginInlineDelivery()``), all on the
  /// thread `inlineThread`, nested in one another: a round inline on the main queue whose
  /// callback sets another observable runs that observable's round inside its own.
  @exclusivity(unchecked) private var inlineDepth = 0
  @exclusivity(unchecked) private var inlineThread: ThreadID?

  /// How long one main-queue turn may deliver before it yields: half a 60 Hz frame.
  static var frameBudgetNanoseconds: UInt64 { 8_000_000 }

  /// The main-actor mailbox of the real main queue, shared by every observable.
  private static let mainQueue = MainQueueMailbox(scheduler: .main, deliversBacklogInline: true)

  /// - Parameters:
  ///   - scheduler: Where items are delivered.
  ///   - deliversBacklogInline: Whether a submission on the main queue delivers a backlog that
  ///     waits for a scheduled turn at once (see the type's discussion).
  ///   - latestPerTurn: Whether a turn delivers only what waits when it starts (see the type's
  ///     discussion); for a lane whose submissions merge.
  init(scheduler: MainScheduler, deliversBacklogInline: Bool = false, latestPerTurn: Bool = false) {
    self.scheduler = scheduler
    self.deliversBacklogInline = deliversBacklogInline
    self.latestPerTurn = latestPerTurn
  }

  deinit {
    lock.deallocate()
  }

  /// The mailbox that main-actor lanes on `scheduler` share: one per main queue, so that their
  /// calls run in the order they were made. ``MainScheduler/immediate``, which runs work on
  /// the sending thread, gets a mailbox per lane: one shared by the unrelated threads that use
  /// it would have one of them deliver another's calls.
  static func forMainActor(on scheduler: MainScheduler) -> MainQueueMailbox {
    switch scheduler.kind {
    case .main: mainQueue
    case .manual(let manual): manual.mainActorMailbox
    case .immediate: MainQueueMailbox(scheduler: scheduler, deliversBacklogInline: true)
    }
  }

  /// How many main-queue turns the mailbox has scheduled so far.
  var hopCount: Int {
    lock.withLock { hops }
  }

  // MARK: - Submitting (the lock held)

  /// Counts a submission that merged into `lane`'s waiting item; the lock is held.
  func recordMerge() {
    submissions &+= 1
  }

  /// Records an item `lane` appended to its waiting items, the lock held, and ends the
  /// submission: takes the mailbox for the caller on the main queue, or schedules a turn, which
  /// is queued after unlocking. Returns with the lock released.
  ///
  /// - Returns: `true` when the caller must call ``drain(withinFrameBudget:)``.
  func recordSubmission(of lane: some MailboxLane) -> Bool {
    submissions &+= 1
    waitingCount += 1
    let id = ObjectIdentifier(lane)
    if openLane == id {
      open!.count += 1
    } else {
      if let closed = open { segments.append(closed) }
      open = Segment(lane: lane, count: 1)
      openLane = id
    }
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

  // MARK: - Inline delivery

  /// Takes the mailbox for delivery at once when the caller is on the main queue and nothing
  /// waits or is being delivered, or when the caller's own inline delivery holds it (a round
  /// nested in a round, in one propagation: it goes on inline, and what other threads queued
  /// meanwhile waits until the outermost one ends). The caller then delivers and calls
  /// ``endInlineDelivery()``.
  func beginInlineDelivery() -> Bool {
    // Asked first, without the lock: the answer depends on the calling thread only, and a
    // producer on another thread then leaves the lock to its submission.
    guard scheduler.isCurrent else { return false }
    lock.lock()
    defer { lock.unlock() }
    if inlineDepth > 0 {
      guard inlineThread == ThreadID.current else { return false }
    } else {
      guard !isDraining, waitingCount == 0, !(isScheduled && !deliversBacklogInline) else {
        return false
      }
      isDraining = true
      inlineThread = ThreadID.current
    }
    inlineDepth += 1
    return true
  }

  /// Gives the mailbox back after the outermost inline delivery, or first delivers the items
  /// submitted meanwhile (re-entrantly, or by other threads), after the inline ones, still
  /// draining.
  func endInlineDelivery() {
    lock.lock()
    inlineDepth -= 1
    if inlineDepth > 0 {
      lock.unlock()
      return
    }
    inlineThread = nil
    if waitingCount == 0 {
      isDraining = false
      lock.unlock()
    } else {
      lock.unlock()
      drain()
    }
  }

  // MARK: - Draining

  /// Delivers the waiting items; called on the main queue by the thread that took the mailbox
  /// (a submission that returned `true`, or ``endInlineDelivery()``).
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

  /// Delivers segments of waiting items, the mailbox taken (`isDraining`), the lock not held.
  ///
  /// A turn (`isTurn`) goes on with the items that arrived while it delivered, unless the mailbox
  /// is `latestPerTurn`; a drain started by a submission delivers the items that wait when it
  /// starts. Either way, what is left when the frame budget is spent, or at the end, goes to a
  /// scheduled turn.
  private func drain(withinFrameBudget: Bool, isTurn: Bool) {
    // The mailbox only drains on its main queue: a submission found it current, or a turn was
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
      // One batch: the items that wait now, segment after segment, oldest first. Each lane
      // takes its part of a segment in one step, so a producer and the main queue meet on the
      // lock once per segment, not once per item.
      let batch = waitingCount
      var owed = batch
      while owed > 0, let segment = takeSegment() {
        let count = segment.count
        if isBudgeted, batches + batch - owed > 0,
          DispatchTime.now().uptimeNanoseconds &- start > Self.frameBudgetNanoseconds
        {
          return endTurnEarly(leaving: segment, rest: count)
        }
        if let left = deliver(segment, budgetStart: isBudgeted ? start : nil) {
          return endTurnEarly(leaving: left, rest: left.count)
        }
        owed -= count
      }
      batches += 1
      if paces, waitingCount < batch {
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

  /// Delivers `segment`'s items, entered and left with the lock held (the items go without
  /// it). Returns what is left of the segment for a later turn, or `nil`, having released the
  /// segment before taking the lock again: once the lane's observable is gone, the segment may
  /// hold the last reference to the lane, and what the lane holds (user values) goes with it.
  private func deliver(_ segment: consuming Segment, budgetStart: UInt64?) -> Segment? {
    let rest = segment.lane.deliver(segment.count, budgetStart: budgetStart, of: self)
    guard rest == 0 else {
      lock.lock()
      return Segment(lane: segment.lane, count: rest)
    }
    _ = consume segment
    lock.lock()
    return nil
  }

  /// Ends a turn out of frame budget, the lock held: the last `rest` items of `segment` go
  /// first in the next turn, which is scheduled. Returns with the lock released.
  private func endTurnEarly(leaving segment: Segment, rest: Int) {
    leftover = Segment(lane: segment.lane, count: rest)
    waitingCount += rest
    isDraining = false
    unlockSchedulingTurn()
  }

  /// The oldest waiting segment, removed, the lock held: what a turn left first, then the
  /// closed segments, then the open one. Its items stop counting as waiting.
  private func takeSegment() -> Segment? {
    let segment: Segment
    if let left = leftover {
      leftover = nil
      segment = left
    } else if let closed = segments.popFirst() {
      segment = closed
    } else if let newest = open {
      open = nil
      openLane = nil
      segment = newest
    } else {
      return nil
    }
    waitingCount -= segment.count
    return segment
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

  /// Waits briefly for a submission, the mailbox still taken (`isDraining`, so a producer's
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
  /// delivering (the turn came while an inline delivery ran) or did so meanwhile.
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
  /// Entered and left with the lock held; the mailbox is taken (`isDraining`).
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
  /// main thread woken while the lock is still held would only block on it. At once, never
  /// later: a turn delayed to pace a fast producer would run after a
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

/// A lane as its mailbox sees it, without its item type.
protocol MailboxLane: AnyObject {
  /// Delivers the lane's `count` oldest waiting items, entered with the mailbox's lock held
  /// and returning with it released; the items are delivered without it, until the frame
  /// budget counted from `budgetStart` (if any) is spent.
  ///
  /// - Returns: How many of the items are left, for a later turn.
  func deliver(_ count: Int, budgetStart: UInt64?, of mailbox: MainQueueMailbox) -> Int
}
