import Testing

@testable import PropertyObservation

/// The scheduler's decisions, driven without threads: who holds a graph's turn, who gets it
/// next, and when a waiter gives up at once.
@Suite("Turn state")
struct TurnStateTests {
  private static let contexts = [ObjectIdentifier(A.self), ObjectIdentifier(B.self)]
  private enum A {}
  private enum B {}

  @Test func aFreeTurnIsTakenAndGivenBackFree() {
    var state = TurnState()
    let took = state.take(by: Self.contexts[0])
    let tookAgain = state.take(by: Self.contexts[1])
    let action = state.giveBack(by: Self.contexts[0], now: 0)
    #expect(took && !tookAgain)
    #expect(action == .free)
    #expect(state.isFree)
  }

  /// Long enough after every waiter's arrival (at 0) that the turn is handed over.
  private static let late = TurnState.passingBudget

  @Test func waitersAreServedInArrivalOrderAndAMainQueueWaiterFirst() {
    var state = TurnState()
    _ = state.take(by: Self.contexts[0])
    state.enqueue(waiter: 1, of: Self.contexts[1], first: false, now: 0)
    state.enqueue(job: 2)
    state.enqueue(waiter: 3, of: Self.contexts[1], first: true, now: 0)
    var actions = [state.giveBack(by: Self.contexts[0], now: Self.late)]
    #expect(state.holder == Self.contexts[1])
    actions.append(state.giveBack(by: Self.contexts[1], now: Self.late))
    // A queued propagation runs on the thread that gives the turn back, which keeps it.
    actions.append(state.giveBack(by: Self.contexts[1], now: Self.late))
    #expect(state.holder == Self.contexts[1])
    actions.append(state.giveBack(by: Self.contexts[1], now: Self.late))
    #expect(actions == [.grant(3), .grant(1), .run(2), .free])
  }

  @Test func aWaiterOfLessThanABudgetIsWokenAndMayBePassedThenHandedTheTurn() {
    var state = TurnState()
    _ = state.take(by: Self.contexts[0])
    state.enqueue(waiter: 1, of: Self.contexts[1], first: false, now: 0)
    let early = state.giveBack(by: Self.contexts[0], now: 1)
    #expect(early == .wake(1))
    // The setter that keeps setting takes the free turn first; the woken waiter cannot.
    let passed = state.take(by: Self.contexts[0])
    let wokenTook = state.takeWoken(1, by: Self.contexts[1])
    #expect(passed && !wokenTook)
    let handed = state.giveBack(by: Self.contexts[0], now: Self.late)
    #expect(handed == .grant(1))
    #expect(state.holder == Self.contexts[1] && state.queue.isEmpty)
  }

  @Test func aJoinedGraphHandsItsQueueToItsRoot() {
    var state = TurnState()
    _ = state.take(by: Self.contexts[0])
    state.enqueue(waiter: 1, of: Self.contexts[1], first: false, now: 0)
    state.enqueue(job: 2)
    let left = state.leave()
    #expect(left == [.waiter(1, Self.contexts[1], since: 0), .job(2)])
    #expect(state.isFree)
    #expect(state.queue.isEmpty)
  }

  /// Every sequence of up to seven events over two threads, against a reference written as
  /// plainly as possible: each decision of the state must be the reference's.
  @Test func everySequenceOfEventsDecidesAsTheReference() {
    var checked = 0
    func explore(_ state: TurnState, _ reference: Reference, depth: Int, nextID: UInt) {
      checked += 1
      #expect(state.holder == reference.holder)
      #expect(state.queue == reference.queue)
      guard depth > 0 else { return }
      for context in Self.contexts {
        var taking = state
        var expected = reference
        let took = taking.take(by: context)
        let expectedTook = expected.take(context)
        #expect(took == expectedTook)
        explore(taking, expected, depth: depth - 1, nextID: nextID)
        for case .waiter(let id, context, _) in reference.queue {
          var woken = state
          var expectedWoken = reference
          let took = woken.takeWoken(id, by: context)
          let expectedTook = expectedWoken.takeWoken(id, context)
          #expect(took == expectedTook)
          explore(woken, expectedWoken, depth: depth - 1, nextID: nextID)
        }
        guard reference.holder != nil else { continue }
        for first in [false, true] where reference.holder != context {
          var waiting = state
          var expectedWaiting = reference
          waiting.enqueue(waiter: nextID, of: context, first: first, now: 0)
          expectedWaiting.enqueueWaiter(nextID, context, first: first)
          explore(waiting, expectedWaiting, depth: depth - 1, nextID: nextID + 1)
        }
      }
      guard let holder = reference.holder else { return }
      var queueing = state
      var expectedQueueing = reference
      queueing.enqueue(job: nextID)
      expectedQueueing.queue.append(.job(nextID))
      explore(queueing, expectedQueueing, depth: depth - 1, nextID: nextID + 1)
      for now in [UInt64(1), Self.late] {
        var giving = state
        var expectedGiving = reference
        let action = giving.giveBack(by: holder, now: now)
        let expectedAction = expectedGiving.giveBack(waitedLongEnough: now >= Self.late)
        #expect(action == expectedAction)
        explore(giving, expectedGiving, depth: depth - 1, nextID: nextID)
      }
      for case .waiter(let id, _, _) in reference.queue {
        var leaving = state
        var expectedLeaving = reference
        leaving.removeWaiter(id)
        expectedLeaving.removeWaiter(id)
        explore(leaving, expectedLeaving, depth: depth - 1, nextID: nextID)
      }
    }
    explore(TurnState(), Reference(), depth: 7, nextID: 1)
    #expect(checked > 10_000)
  }

  private struct Reference {
    var holder: ObjectIdentifier?
    var queue: [TurnState.Entry] = []
    var progress = 0

    mutating func take(_ context: ObjectIdentifier) -> Bool {
      if holder != nil || queue.contains(where: { !$0.isWaiterEntry }) { return false }
      holder = context
      return true
    }

    mutating func enqueueWaiter(_ id: UInt, _ context: ObjectIdentifier, first: Bool) {
      if first {
        queue = [.waiter(id, context, since: 0)] + queue
      } else {
        queue += [.waiter(id, context, since: 0)]
      }
    }

    mutating func takeWoken(_ id: UInt, _ context: ObjectIdentifier) -> Bool {
      if holder != nil { return false }
      holder = context
      queue = queue.filter { !$0.isWaiter(id) }
      return true
    }

    mutating func removeWaiter(_ id: UInt) {
      queue = queue.filter { !$0.isWaiter(id) }
    }

    mutating func giveBack(waitedLongEnough: Bool) -> TurnState.GiveBackAction {
      progress += 1
      guard let next = queue.first else {
        holder = nil
        return .free
      }
      switch next {
      case .waiter(let id, _, _) where !waitedLongEnough:
        holder = nil
        return .wake(id)
      case .waiter(let id, let context, _):
        queue.removeFirst()
        holder = context
        return .grant(id)
      case .job(let id):
        queue.removeFirst()
        return .run(id)
      }
    }
  }
}

extension TurnState.Entry {
  fileprivate var isWaiterEntry: Bool {
    if case .waiter = self { true } else { false }
  }

  fileprivate func isWaiter(_ id: UInt) -> Bool {
    if case .waiter(id, _, _) = self { true } else { false }
  }
}
