import Foundation
import Testing

@testable import PropertyObservation

/// The delivery state machine on its own, without threads: every sequence of events from three
/// threads up to a fixed length, and every combination of the facts a reached change is decided
/// on, checked against a reference written from the Threading article's rules; and the illegal
/// transitions, which must stop the program.
@Suite("Delivery state machine", .serialized)
struct DeliveryStateTests {
  private static let threads = [ThreadID(raw: 1), ThreadID(raw: 2), ThreadID(raw: 3)]

  /// One event a thread can cause.
  private enum Event: Equatable {
    case set, register, registerWithInitial, remove, openGate, finish, adoptQueuedRole
    /// A set from the main queue of a main-actor lane, which goes first; a set whose wait to be
    /// admitted timed out.
    case setOnTheMainQueue, setAfterGivingUp
    /// The deliverer finishes while the next thread waits to be admitted, for less than a budget
    /// or for a whole one.
    case finishBeforeAWaitingSetter, finishBeforeAnOverdueSetter
    /// A set inside a callback (of any observable), and a set behind registrations queued while
    /// nobody delivers.
    case setInsideACallback, setBehindQueuedRegistrations
    /// The deliverer delivered a round; a setter's wait to be admitted timed out.
    case deliverRound, turnTimesOut
    /// The deliverer reaches a queued change of that kind.
    case reach(Reached)
  }

  /// A kind of queued change the deliverer reaches.
  private enum Reached {
    /// Its own; one nobody waits for (a set inside a callback on another thread), with or
    /// without one of the deliverer's own queued behind; one whose setter stopped waiting.
    case own, unwaited, unwaitedBeforeOwn, abandoned
    /// One nobody waits for, reached by a deliverer inside a callback, which may neither
    /// combine nor wait (with the rounds kept for closed gates at their bound).
    case unwaitedInsideACallback
    /// One nobody waits for, reached with removed closures still to let go.
    case unwaitedWithClosuresToRelease
    /// A change reached with the rounds kept for closed gates at their bound, before and after
    /// a wait for the gates that timed out.
    case withAFullBacklog, withAFullBacklogAfterWaiting

    /// The facts the deliverer on `thread` reaches this kind of change with.
    func change(on thread: ThreadID) -> ReachedChange {
      var change: ReachedChange
      switch self {
      case .own: change = ReachedChange(setter: .thread(thread))
      case .abandoned: change = ReachedChange(setter: .gaveUp)
      default: change = ReachedChange(setter: .nobody)
      }
      change.ownChangeQueued = self == .unwaitedBeforeOwn
      change.mayCombine = self != .unwaitedInsideACallback
      change.mayWait = change.mayCombine
      change.hasClosuresToRelease = self == .unwaitedWithClosuresToRelease
      change.heldBacklogIsFull = [
        .withAFullBacklog, .withAFullBacklogAfterWaiting, .unwaitedInsideACallback,
      ].contains(self)
      change.waitedForGates = self == .withAFullBacklogAfterWaiting
      return change
    }
  }

  /// The events the sequences are made of: every kind of set, registration, removal, gate and
  /// hand-over, and a reached change of each kind of setter. The other combinations of facts a
  /// reached change is decided on are each checked from every budget state in
  /// `everyCombinationOfFactsOfAReachedChangeFollowsTheRules`.
  private static let explored: [Event] = [
    .set, .setInsideACallback, .setBehindQueuedRegistrations, .register, .registerWithInitial,
    .remove, .openGate, .finish, .adoptQueuedRole, .deliverRound, .turnTimesOut, .reach(.own),
    .reach(.unwaited), .reach(.unwaitedBeforeOwn), .reach(.abandoned),
    .reach(.unwaitedInsideACallback), .reach(.unwaitedWithClosuresToRelease),
    .reach(.withAFullBacklog), .setOnTheMainQueue, .setAfterGivingUp,
    .finishBeforeAWaitingSetter, .finishBeforeAnOverdueSetter,
  ]

  /// A small budget, so that sequences of a few events spend it.
  private static let budget = DeliveryState.CombiningBudget(rounds: 1, nanoseconds: 1_000)

  /// What the rules say, kept as plainly as possible.
  private struct Reference {
    var deliverer: ThreadID? {
      didSet {
        combined = 0
        isQueueJob = false
        isHandedToQueue = false
      }
    }
    /// Whether the role was handed to the delivery queue, whose job has not started.
    var isHandedToQueue = false
    /// Rounds the deliverer delivered for other threads since it took the role, and when the
    /// first of them was.
    var combined = 0
    var combiningSince: UInt64 = 0
    /// Whether the deliverer is the delivery queue's job.
    var isQueueJob = false
    /// Closed gates, by the thread whose `.initial` is running.
    var gates = PerThread<Int>(0)
    /// Rounds delivered and hand-overs made.
    var progress: UInt = 0
    /// The progress each waiting thread saw when its current timeout started.
    var progressSeen = PerThread<UInt>(0)
    /// The setter the role is kept for once nobody delivers.
    var reservedFor: ThreadID?

    /// Whether a set on `thread` outside callbacks is admitted: nobody delivers and the role is
    /// not kept for another setter (unless the set has priority), or the thread delivers itself.
    func admits(_ thread: ThreadID, withPriority: Bool) -> Bool {
      if deliverer == nil && !isHandedToQueue {
        return reservedFor == nil || reservedFor == thread || withPriority
      }
      return deliverer == thread
    }

    /// Whether `thread` may cause `event` now: only the deliverer finishes or hands over, and
    /// only a thread with a closed gate opens one, when its `.initial` returns. A set made
    /// inside that `.initial` may make the thread the deliverer for a while, but the set has
    /// returned, and the role moved on, before `.initial` can return.
    func allows(_ event: Event, on thread: ThreadID) -> Bool {
      switch event {
      case .finish, .finishBeforeAWaitingSetter, .finishBeforeAnOverdueSetter, .reach,
        .deliverRound:
        deliverer == thread
      case .adoptQueuedRole: isHandedToQueue
      case .openGate: gates[thread] > 0 && deliverer != thread
      case .turnTimesOut: deliverer != thread && (deliverer != nil || isHandedToQueue)
      case .setBehindQueuedRegistrations: deliverer == nil && !isHandedToQueue
      case .set, .setInsideACallback, .register, .registerWithInitial, .remove,
        .setOnTheMainQueue, .setAfterGivingUp:
        true
      }
    }
  }

  @Test func everySequenceOfLegalEventsFollowsTheRules() async {
    // A few seconds of pure computation: run it on a thread of its own rather than hold one of
    // the few threads that every other test's tasks share.
    let explored = await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: Self.exploreAll()) }
    }
    #expect(explored > 10_000)
    print("EXPLORED", explored)
  }

  private static func exploreAll() -> Int {
    var explored = 0
    func explore(_ state: DeliveryState, _ reference: Reference, depth: Int) {
      explored += 1
      guard depth > 0 else { return }
      for thread in Self.threads {
        for event in Self.explored where reference.allows(event, on: thread) {
          var state = state
          var reference = reference
          apply(event, on: thread, to: &state, reference: &reference)
          explore(state, reference, depth: depth - 1)
        }
      }
    }
    explore(DeliveryState(), Reference(), depth: 4)
    return explored
  }

  private static func apply(
    _ event: Event,
    on thread: ThreadID,
    to state: inout DeliveryState,
    reference: inout Reference
  ) {
    let deliverer = reference.deliverer
    let context = { "\(event) on \(thread) with deliverer \(String(describing: deliverer))" }
    switch event {
    case .set, .setBehindQueuedRegistrations, .setOnTheMainQueue, .setAfterGivingUp:
      // An outer set: admitted (or not) first, then set without unlocking in between.
      let onTheMainQueue = event == .setOnTheMainQueue
      let gaveUp = event == .setAfterGivingUp
      if gaveUp {
        state.stopWaitingForAdmission(on: thread)
        if reference.reservedFor == thread { reference.reservedFor = nil }
      } else {
        let admitted = reference.admits(thread, withPriority: onTheMainQueue)
        let action = state.admit(on: thread, hasPriority: onTheMainQueue)
        check(action == (admitted ? .store : .waitForRole), context())
        guard admitted else {
          // It waits: from now on its wait may time out. The main queue's setter goes first.
          reference.progressSeen[thread] = reference.progress
          if onTheMainQueue { reference.reservedFor = thread }
          break
        }
        if reference.reservedFor == thread { reference.reservedFor = nil }
      }
      let queueIsEmpty = event != .setBehindQueuedRegistrations
      let action = state.set(on: thread, queueIsEmpty: queueIsEmpty, gaveUpWaiting: gaveUp)
      if reference.deliverer == nil && !reference.isHandedToQueue {
        check(action == (queueIsEmpty ? .deliver : .enqueueAndDrain), context())
        reference.deliverer = thread
      } else if reference.deliverer == thread {
        check(action == .enqueue, context())
      } else {
        // A set admitted finds nobody delivering, or its own thread.
        check(gaveUp && action == .enqueueGivenUp, context())
      }
    case .setInsideACallback:
      // Never admitted: waiting there could close a cycle of waits between threads.
      let action = state.set(on: thread, insideCallback: true)
      if reference.deliverer == nil && !reference.isHandedToQueue {
        check(action == .deliver, context())
        reference.deliverer = thread
      } else if reference.deliverer == thread {
        check(action == .enqueue, context())
      } else {
        check(action == .enqueueWithoutWaiting, context())
      }
    case .deliverRound:
      state.didDeliverRound()
      reference.progress += 1
    case .turnTimesOut:
      var seen = reference.progressSeen[thread]
      let givesUp = state.turnTimedOut(progressSeen: &seen)
      // No round and no hand-over for a whole timeout: stuck, not slow.
      let expectedGivesUp = reference.progressSeen[thread] == reference.progress
      check(givesUp == expectedGivesUp, context())
      check(seen == reference.progress, context())
      reference.progressSeen[thread] = reference.progress
    case .register, .registerWithInitial:
      let sendsInitial = event == .registerWithInitial
      let action = state.register(on: thread, sendsInitial: sendsInitial)
      switch reference.deliverer {
      case nil where !reference.isHandedToQueue:
        let queued = reference.gates.total > 0
        let expected: DeliveryState.RegistrationAction =
          sendsInitial ? .enqueueGated : (queued ? .enqueue : .append)
        check(action == expected, context())
        if sendsInitial { reference.gates[thread] += 1 }
      case thread:
        check(action == .enqueue, context())
      default:
        check(action == (sendsInitial ? .enqueueGated : .enqueue), context())
        if sendsInitial { reference.gates[thread] += 1 }
      }
    case .remove:
      let action = state.remove(on: thread)
      if reference.deliverer == nil && !reference.isHandedToQueue {
        check(action == .removeNow, context())
      } else {
        check(action == (reference.deliverer == thread ? .mark : .deferToNextRound), context())
      }
    case .openGate:
      let missedRounds = reference.gates.total % 2 == 0
      let action = state.openGate(on: thread, missedRounds: missedRounds)
      reference.gates[thread] -= 1
      if reference.deliverer == nil && !reference.isHandedToQueue && !missedRounds {
        check(action == .applyRegistrations, context())
      } else if reference.deliverer == nil && !reference.isHandedToQueue {
        check(action == .catchUp, context())
        reference.deliverer = thread
      } else {
        check(action == .leaveToDeliverer, context())
      }
    case .finish, .finishBeforeAWaitingSetter, .finishBeforeAnOverdueSetter:
      // The next thread waits to be admitted: since now, or for a whole budget.
      let next = Self.threads.first { $0 != thread }!
      let now: UInt64 = 1_000_000
      let waiting: (thread: ThreadID, since: UInt64)? =
        switch event {
        case .finishBeforeAWaitingSetter: (next, now)
        case .finishBeforeAnOverdueSetter: (next, now - Self.budget.nanoseconds)
        default: nil
        }
      let woken = state.finish(on: thread, oldestWaiting: waiting, now: now, budget: Self.budget)
      reference.deliverer = nil
      if event == .finishBeforeAnOverdueSetter && reference.reservedFor == nil {
        reference.reservedFor = next
      }
      // The setter the role is kept for is woken, or else the oldest one waiting.
      check(woken == (waiting == nil ? nil : reference.reservedFor ?? next), context())
    case .reach(let reached):
      let change = reached.change(on: thread)
      let action = change.reach(on: thread, &state, onQueue: reference.isQueueJob)
      check(action == expectedAction(for: change, on: thread, reference: &reference), context())
      check(state.combinedRounds == reference.combined, context())
    case .adoptQueuedRole:
      state.adoptQueuedRole(on: thread)
      reference.deliverer = thread
      reference.isQueueJob = true
    }
    let expectedRole: DeliveryState.Role =
      reference.isHandedToQueue
      ? .handedToQueue : reference.deliverer.map { .delivering($0) } ?? .idle
    check(state.role == expectedRole, context())
    check(state.closedGates == reference.gates.total, context())
    check(state.progress == reference.progress, context())
    check(state.reservedFor == reference.reservedFor, context())
  }

  /// The facts a reached change is decided on (see ``DeliveryState/reachChange``).
  private struct ReachedChange {
    var setter: DeliveryState.Setter
    var hasClosuresToRelease = false
    var heldBacklogIsFull = false
    var mayWait = true
    var waitedForGates = false
    var ownChangeQueued = false
    var mayCombine = true
    var now: UInt64 = 0

    func reach(on thread: ThreadID, _ state: inout DeliveryState, onQueue: Bool)
      -> DeliveryState.ChangeAction
    {
      state.reachChange(
        by: setter, on: thread, onQueue: onQueue, hasClosuresToRelease: hasClosuresToRelease,
        heldBacklogIsFull: heldBacklogIsFull, mayWait: mayWait, waitedForGates: waitedForGates,
        ownChangeQueued: ownChangeQueued, mayCombine: mayCombine, now: now,
        budget: DeliveryStateTests.budget)
    }
  }

  /// The rules for a queued change the deliverer reaches, in order:
  /// - with the rounds kept for closed gates at their bound, a deliverer that may wait waits for
  ///   a gate first, unless its last such wait timed out;
  /// - another thread's change waits until removed closures are let go;
  /// - its own change, one whose setter stopped waiting, and (on the queue's job) one nobody
  ///   waits for are delivered here;
  /// - up to one of its own queued behind, every change is delivered here;
  /// - otherwise a change nobody waits for is delivered here while the budget lasts (never by a
  ///   deliverer inside a callback), and then the role moves to the delivery queue.
  /// (No other thread's change waits in the queue for it: such a setter stores only once
  /// admitted.)
  private static func expectedAction(
    for change: ReachedChange, on thread: ThreadID, reference: inout Reference
  ) -> DeliveryState.ChangeAction {
    if change.heldBacklogIsFull && change.mayWait && !change.waitedForGates {
      return .waitForGates
    }
    if change.setter != .thread(thread) && change.hasClosuresToRelease {
      return .releaseClosuresFirst
    }
    func combines() -> Bool {
      guard reference.combined < budget.rounds && change.mayCombine else { return false }
      if reference.combined == 0 { reference.combiningSince = change.now }
      guard change.now - reference.combiningSince < budget.nanoseconds else { return false }
      reference.combined += 1
      return true
    }
    switch change.setter {
    case .thread(thread), .gaveUp:
      return .deliver
    case .nobody:
      if reference.isQueueJob || change.ownChangeQueued || combines() { return .deliver }
      reference.deliverer = nil
      reference.isHandedToQueue = true
      reference.progress += 1
      return .handOverToQueue
    case .thread:
      preconditionFailure("not explored: it stops the program")
    }
  }

  @Test func everyCombinationOfFactsOfAReachedChangeFollowsTheRules() async {
    let deliverer = ThreadID(raw: 1)
    let setters: [DeliveryState.Setter] = [.thread(deliverer), .nobody, .gaveUp]
    var cases = 0
    for onQueue in [false, true] {
      // Budgets untouched, partly spent and spent by earlier rounds for other threads; times
      // within the budget's time and past it.
      for combinedBefore in 0...Self.budget.rounds {
        for now: UInt64 in [0, Self.budget.nanoseconds - 1, Self.budget.nanoseconds] {
          for setter in setters {
            for facts in 0..<(1 << 6) {
              var state = DeliveryState()
              var reference = Reference()
              if onQueue {
                _ = state.set(on: ThreadID(raw: 3))
                _ = ReachedChange(setter: .nobody, mayCombine: false).reach(
                  on: ThreadID(raw: 3), &state, onQueue: false)
                state.adoptQueuedRole(on: deliverer)
                reference.progress = 1
              } else {
                _ = state.set(on: deliverer)
              }
              reference.deliverer = deliverer
              reference.isQueueJob = onQueue
              for _ in 0..<combinedBefore {
                let earlier = ReachedChange(setter: .nobody)
                _ = earlier.reach(on: deliverer, &state, onQueue: onQueue)
                _ = Self.expectedAction(for: earlier, on: deliverer, reference: &reference)
              }
              let flag = { (bit: Int) in facts & (1 << bit) != 0 }
              let change = ReachedChange(
                setter: setter, hasClosuresToRelease: flag(0), heldBacklogIsFull: flag(1),
                mayWait: flag(2), waitedForGates: flag(3), ownChangeQueued: flag(4),
                mayCombine: flag(5), now: now)
              let action = change.reach(on: deliverer, &state, onQueue: onQueue)
              let expected = Self.expectedAction(for: change, on: deliverer, reference: &reference)
              let context = "\(change) on queue \(onQueue) after \(combinedBefore) combined"
              check(action == expected, context)
              check(state.combinedRounds == reference.combined, context)
              check(state.progress == reference.progress, context)
              let role: DeliveryState.Role =
                reference.isHandedToQueue
                ? .handedToQueue : reference.deliverer.map { .delivering($0) } ?? .idle
              check(state.role == role, context)
              cases += 1
            }
          }
        }
      }
    }
    #expect(cases == 2 * (Self.budget.rounds + 1) * 3 * setters.count * (1 << 6))
  }

  @Test func theCombiningBudgetEndsWithItsTime() async {
    var state = DeliveryState()
    let deliverer = ThreadID(raw: 7)
    #expect(state.set(on: deliverer) == .deliver)
    let budget = DeliveryState.CombiningBudget(rounds: 100, nanoseconds: 1_000)
    func reach(at now: UInt64) -> DeliveryState.ChangeAction {
      state.reachChange(
        by: .nobody, on: deliverer, onQueue: false, ownChangeQueued: false, now: now,
        budget: budget)
    }
    // The clock starts at the first round for another thread, not when the role was taken.
    #expect(reach(at: 5_000) == .deliver)
    #expect(reach(at: 5_999) == .deliver)
    #expect(reach(at: 6_000) == .handOverToQueue)
    #expect(state.role == .handedToQueue)
    #expect(state.combinedRounds == 0)
  }

  @Test func theStandardBudgetCombinesRoundsForOtherThreads() async {
    // The engine's own budget delivers several changes nobody waits for before it hands the
    // role to the delivery queue.
    var state = DeliveryState()
    let deliverer = ThreadID(raw: 7)
    #expect(state.set(on: deliverer) == .deliver)
    var delivered = 0
    while case .deliver = state.reachChange(
      by: .nobody, on: deliverer, onQueue: false, ownChangeQueued: false, now: 0)
    {
      delivered += 1
    }
    #expect(delivered == DeliveryState.CombiningBudget.standard.rounds)
    #expect(state.role == .handedToQueue)
  }

  @Test func aSetterThatWaitedABudgetIsAdmittedBeforeTheThreadThatKeepsSetting() async {
    // Thread 8 waits to be admitted while 7 delivers. 7 finishes and sets again at once, before
    // 8 wakes up: it is admitted while 8 has waited less than a budget, and not once 8 has
    // waited a whole one.
    var state = DeliveryState()
    let (keepsSetting, waiting) = (ThreadID(raw: 7), ThreadID(raw: 8))
    let budget = DeliveryState.CombiningBudget(rounds: 64, nanoseconds: 1_000)
    #expect(state.set(on: keepsSetting) == .deliver)
    #expect(state.admit(on: waiting) == .waitForRole)
    #expect(
      state.finish(on: keepsSetting, oldestWaiting: (waiting, 0), now: 999, budget: budget)
        == waiting)
    #expect(state.admit(on: keepsSetting) == .store)
    #expect(state.set(on: keepsSetting) == .deliver)
    #expect(
      state.finish(on: keepsSetting, oldestWaiting: (waiting, 0), now: 1_000, budget: budget)
        == waiting)
    #expect(state.admit(on: keepsSetting) == .waitForRole)
    #expect(state.admit(on: keepsSetting, hasPriority: true) == .store, "the main queue")
    #expect(state.admit(on: waiting) == .store)
    #expect(state.reservedFor == nil)
    #expect(state.admit(on: keepsSetting) == .store)
  }

  @Test func theMainQueuesSetterGoesBeforeEveryWaitingSetter() async {
    var state = DeliveryState()
    let (deliverer, waiting, main) = (ThreadID(raw: 7), ThreadID(raw: 8), ThreadID(raw: 9))
    #expect(state.set(on: deliverer) == .deliver)
    #expect(state.admit(on: waiting) == .waitForRole)
    #expect(state.admit(on: main, hasPriority: true) == .waitForRole)
    #expect(state.reservedFor == main)
    // The waiting setter waited a whole budget, yet the main queue's setter is woken.
    #expect(state.finish(on: deliverer, oldestWaiting: (waiting, 0), now: 1_000_000) == main)
    #expect(state.admit(on: waiting) == .waitForRole)
    #expect(state.admit(on: main) == .store)
    #expect(state.reservedFor == nil)
  }

  @Test func anotherThreadsQueuedChangeStopsTheProgram() async {
    // Only the deliverer's own changes are queued for a thread: any other setter stores only
    // once admitted, and then delivers itself.
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      _ = state.reachChange(
        by: .thread(ThreadID(raw: 2)), on: ThreadID(raw: 1), onQueue: false,
        ownChangeQueued: false, now: 0)
    }
  }

  @Test func aSetOutsideCallbacksThatWasNotAdmittedStopsTheProgram() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      _ = state.set(on: ThreadID(raw: 2))
    }
  }

  @Test func onlyTheDelivererMayFinish() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      state.finish(on: ThreadID(raw: 2))
    }
  }

  @Test func anIdleObservableHasNoDelivererToFinish() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      state.finish(on: ThreadID(raw: 1))
    }
  }

  @Test func onlyTheDelivererMayReachAQueuedChange() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      _ = state.reachChange(
        by: .thread(ThreadID(raw: 3)), on: ThreadID(raw: 2), onQueue: false,
        ownChangeQueued: false, now: 0)
    }
  }

  @Test func onlyTheDeliveryQueueMayAdoptAQueuedRole() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 2))
      state.adoptQueuedRole(on: ThreadID(raw: 3))
    }
  }

  @Test func aGateThatWasNeverClosedCannotBeOpened() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.openGate(on: ThreadID(raw: 1), missedRounds: true)
    }
  }
}

/// A value for each of the explored threads (raw identifiers 1, 2 and 3): cheaper to copy at
/// every step of the exploration than a dictionary.
private struct PerThread<Element: AdditiveArithmetic> {
  private var values: (Element, Element, Element)

  init(_ initial: Element) {
    values = (initial, initial, initial)
  }

  subscript(thread: ThreadID) -> Element {
    get {
      switch thread {
      case ThreadID(raw: 1): values.0
      case ThreadID(raw: 2): values.1
      default: values.2
      }
    }
    set {
      switch thread {
      case ThreadID(raw: 1): values.0 = newValue
      case ThreadID(raw: 2): values.1 = newValue
      default: values.2 = newValue
      }
    }
  }

  var total: Element { values.0 + values.1 + values.2 }
}

/// Records a failure naming `context` when `condition` is false: the exhaustive exploration
/// checks millions of conditions, too many for `#expect`'s capture of every expression.
private func check(
  _ condition: Bool, _ context: @autoclosure () -> String,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  guard !condition else { return }
  Issue.record(Comment(rawValue: context()), sourceLocation: sourceLocation)
}
