import Foundation
import Testing

@testable import PropertyObservation

/// The delivery state machine on its own, without threads: every sequence of events from three
/// threads up to a fixed length, checked against a reference written from the Threading
/// article's rules, and the illegal transitions, which must stop the program.
@Suite("Delivery state machine", .serialized)
struct DeliveryStateTests {
  private static let threads = [ThreadID(raw: 1), ThreadID(raw: 2), ThreadID(raw: 3)]

  /// One event a thread can cause.
  private enum Event: CaseIterable {
    case set, register, registerWithInitial, remove, openGate, finish, adoptQueuedRole
    /// The deliverer reaches a queued change: its own; one whose setter (the next thread) waits,
    /// with or without one of the deliverer's own queued behind; one nobody waits for (a set
    /// inside a callback on another thread), likewise; one whose setter stopped waiting.
    case reachOwnChange, reachWaitingChange, reachWaitingChangeBeforeOwn
    case reachUnwaitedChange, reachUnwaitedChangeBeforeOwn, reachAbandonedChange
    /// A waiting setter that must deliver its change itself (on the main queue, with main-actor
    /// registrations), with or without one of the deliverer's own queued behind.
    case reachMainThreadChange, reachMainThreadChangeBeforeOwn
    /// The same two kinds reached by a deliverer inside a callback, which may not combine.
    case reachWaitingChangeInsideACallback, reachUnwaitedChangeInsideACallback
  }

  /// A small budget, so that sequences of a few events spend it.
  private static let budget = DeliveryState.CombiningBudget(rounds: 2, nanoseconds: 1_000)

  /// What the rules say, kept as plainly as possible.
  private struct Reference {
    var deliverer: ThreadID? {
      didSet {
        combined = 0
        isQueueJob = false
      }
    }
    /// Rounds the deliverer delivered for other threads since it took the role.
    var combined = 0
    /// Whether the deliverer is the delivery queue's job.
    var isQueueJob = false
    /// Closed gates, by the thread whose `.initial` is running.
    var gates: [ThreadID: Int] = [:]

    /// Whether `thread` may cause `event` now: only the deliverer finishes or hands over, and
    /// only a thread with a closed gate opens one, when its `.initial` returns. A set made
    /// inside that `.initial` may make the thread the deliverer for a while, but the set has
    /// returned, and the role moved on, before `.initial` can return.
    func allows(_ event: Event, on thread: ThreadID) -> Bool {
      switch event {
      case .finish: deliverer == thread
      case .reachOwnChange, .reachWaitingChange, .reachWaitingChangeBeforeOwn,
        .reachUnwaitedChange, .reachUnwaitedChangeBeforeOwn, .reachAbandonedChange,
        .reachMainThreadChange, .reachMainThreadChangeBeforeOwn,
        .reachWaitingChangeInsideACallback, .reachUnwaitedChangeInsideACallback:
        deliverer == thread
      case .adoptQueuedRole: deliverer == .deliveryQueue
      case .openGate: gates[thread, default: 0] > 0 && deliverer != thread
      case .set, .register, .registerWithInitial, .remove: true
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
  }

  private static func exploreAll() -> Int {
    var explored = 0
    func explore(_ state: DeliveryState, _ reference: Reference, depth: Int) {
      explored += 1
      guard depth > 0 else { return }
      for thread in Self.threads {
        for event in Event.allCases where reference.allows(event, on: thread) {
          var state = state
          var reference = reference
          apply(event, on: thread, to: &state, reference: &reference)
          explore(state, reference, depth: depth - 1)
        }
      }
    }
    explore(DeliveryState(), Reference(), depth: 5)
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
    case .set:
      let action = state.set(on: thread)
      switch reference.deliverer {
      case nil:
        check(action == .deliver, context())
        reference.deliverer = thread
      case thread:
        check(action == .enqueue, context())
      default:
        check(action == .enqueueAndWait, context())
      }
    case .register, .registerWithInitial:
      let sendsInitial = event == .registerWithInitial
      let action = state.register(on: thread, sendsInitial: sendsInitial)
      switch reference.deliverer {
      case nil:
        let queued = reference.gates.values.reduce(0, +) > 0
        let expected: DeliveryState.RegistrationAction =
          sendsInitial ? .enqueueGated : (queued ? .enqueue : .append)
        check(action == expected, context())
        if sendsInitial { reference.gates[thread, default: 0] += 1 }
      case thread:
        check(action == .enqueue, context())
      default:
        check(action == (sendsInitial ? .enqueueGated : .enqueue), context())
        if sendsInitial { reference.gates[thread, default: 0] += 1 }
      }
    case .remove:
      let action = state.remove(on: thread)
      switch reference.deliverer {
      case nil: check(action == .removeNow, context())
      case thread: check(action == .mark, context())
      default: check(action == .deferToNextRound, context())
      }
    case .openGate:
      let missedRounds = reference.gates.count % 2 == 0
      let action = state.openGate(on: thread, missedRounds: missedRounds)
      reference.gates[thread, default: 0] -= 1
      if reference.deliverer == nil && !missedRounds {
        check(action == .applyRegistrations, context())
      } else if reference.deliverer == nil {
        check(action == .catchUp, context())
        reference.deliverer = thread
      } else {
        check(action == .leaveToDeliverer, context())
      }
    case .finish:
      state.finish(on: thread)
      reference.deliverer = nil
    case .reachOwnChange, .reachWaitingChange, .reachWaitingChangeBeforeOwn,
      .reachUnwaitedChange, .reachUnwaitedChangeBeforeOwn, .reachAbandonedChange,
      .reachMainThreadChange, .reachMainThreadChangeBeforeOwn,
      .reachWaitingChangeInsideACallback, .reachUnwaitedChangeInsideACallback:
      reachChange(event, on: thread, state: &state, reference: &reference, context: context)
    case .adoptQueuedRole:
      state.adoptQueuedRole(on: thread)
      reference.deliverer = thread
      reference.isQueueJob = true
    }
    let expectedRole: DeliveryState.Role = reference.deliverer.map { .delivering($0) } ?? .idle
    check(state.role == expectedRole, context())
    check(state.closedGates == reference.gates.values.reduce(0, +), context())
    for candidate in Self.threads {
      check(state.isDeliverer(candidate) == (reference.deliverer == candidate), context())
    }
  }

  /// The rules for a queued change the deliverer reaches: its own, one left to any deliverer,
  /// and (on the queue's job) one nobody waits for are delivered here; up to one of its own
  /// queued behind, every change is delivered here, for its setter if one waits; a setter that
  /// must deliver itself gets the role; otherwise other threads' changes are delivered for them
  /// while the budget lasts (never by a deliverer inside a callback), and then the role moves to
  /// the waiting setter, or to the delivery queue when nobody waits.
  private static func reachChange(
    _ event: Event,
    on thread: ThreadID,
    state: inout DeliveryState,
    reference: inout Reference,
    context: () -> String
  ) {
    let next = Self.threads.first { $0 != thread }!
    let setter: ThreadID? =
      switch event {
      case .reachOwnChange: thread
      case .reachWaitingChange, .reachWaitingChangeBeforeOwn, .reachMainThreadChange,
        .reachMainThreadChangeBeforeOwn, .reachWaitingChangeInsideACallback:
        next
      case .reachAbandonedChange: .anyDeliverer
      default: nil
      }
    let ownQueued =
      event == .reachWaitingChangeBeforeOwn || event == .reachUnwaitedChangeBeforeOwn
      || event == .reachMainThreadChangeBeforeOwn
    let deliversItself =
      event == .reachMainThreadChange || event == .reachMainThreadChangeBeforeOwn
    let mayCombine =
      event != .reachWaitingChangeInsideACallback && event != .reachUnwaitedChangeInsideACallback
    let action = state.reachChange(
      by: setter, on: thread, onQueue: reference.isQueueJob, ownChangeQueued: ownQueued,
      setterDeliversItself: deliversItself, mayCombine: mayCombine, now: 0, budget: Self.budget)
    let expected: DeliveryState.ChangeAction
    if setter == thread || setter == .anyDeliverer || (setter == nil && reference.isQueueJob) {
      expected = .deliver
    } else if ownQueued {
      expected = setter.map { .deliverFor($0) } ?? .deliver
    } else if let setter, deliversItself {
      expected = .handOver(to: setter)
      reference.deliverer = setter
    } else if reference.combined < Self.budget.rounds && mayCombine {
      expected = setter.map { .deliverFor($0) } ?? .deliver
      reference.combined += 1
    } else if let setter {
      expected = .handOver(to: setter)
      reference.deliverer = setter
    } else {
      expected = .handOverToQueue
      reference.deliverer = .deliveryQueue
    }
    check(action == expected, context())
    check(state.combinedRounds == reference.combined, context())
  }

  @Test func theCombiningBudgetEndsWithItsTime() async {
    var state = DeliveryState()
    let deliverer = ThreadID(raw: 7)
    let waiting = ThreadID(raw: 8)
    #expect(state.set(on: deliverer) == .deliver)
    let budget = DeliveryState.CombiningBudget(rounds: 100, nanoseconds: 1_000)
    func reach(at now: UInt64) -> DeliveryState.ChangeAction {
      state.reachChange(
        by: waiting, on: deliverer, onQueue: false, ownChangeQueued: false, now: now,
        budget: budget)
    }
    // The clock starts at the first round for another thread, not when the role was taken.
    #expect(reach(at: 5_000) == .deliverFor(waiting))
    #expect(reach(at: 5_999) == .deliverFor(waiting))
    #expect(reach(at: 6_000) == .handOver(to: waiting))
    #expect(state.role == .delivering(waiting))
    #expect(state.combinedRounds == 0)
  }

  @Test func theStandardBudgetCombinesRoundsForOtherThreads() async {
    // The engine's own budget delivers several changes for waiting setters before any hand-over.
    var state = DeliveryState()
    let deliverer = ThreadID(raw: 7)
    #expect(state.set(on: deliverer) == .deliver)
    var delivered = 0
    while case .deliverFor = state.reachChange(
      by: ThreadID(raw: 8), on: deliverer, onQueue: false, ownChangeQueued: false, now: 0)
    {
      delivered += 1
    }
    #expect(delivered == DeliveryState.CombiningBudget.standard.rounds)
    #expect(state.role == .delivering(ThreadID(raw: 8)))
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
        by: ThreadID(raw: 3), on: ThreadID(raw: 2), onQueue: false, ownChangeQueued: false,
        now: 0)
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

/// Records a failure naming `context` when `condition` is false: the exhaustive exploration
/// checks millions of conditions, too many for `#expect`'s capture of every expression.
private func check(
  _ condition: Bool, _ context: @autoclosure () -> String,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  guard !condition else { return }
  Issue.record(Comment(rawValue: context()), sourceLocation: sourceLocation)
}
