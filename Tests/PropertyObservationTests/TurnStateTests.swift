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
    let action = state.giveBack(by: Self.contexts[0])
    #expect(took && !tookAgain)
    #expect(action == .free)
    #expect(state.isFree)
  }

  @Test func waitersAreServedInArrivalOrderAndAMainQueueWaiterFirst() {
    var state = TurnState()
    _ = state.take(by: Self.contexts[0])
    state.enqueue(waiter: 1, of: Self.contexts[1], first: false)
    state.enqueue(job: 2)
    state.enqueue(waiter: 3, of: Self.contexts[1], first: true)
    var actions = [state.giveBack(by: Self.contexts[0])]
    #expect(state.holder == Self.contexts[1])
    actions.append(state.giveBack(by: Self.contexts[1]))
    // A queued propagation runs on the thread that gives the turn back, which keeps it.
    actions.append(state.giveBack(by: Self.contexts[1]))
    #expect(state.holder == Self.contexts[1])
    actions.append(state.giveBack(by: Self.contexts[1]))
    #expect(actions == [.grant(3), .grant(1), .run(2), .free])
  }

  @Test func aJoinedGraphHandsItsQueueToItsRoot() {
    var state = TurnState()
    _ = state.take(by: Self.contexts[0])
    state.enqueue(waiter: 1, of: Self.contexts[1], first: false)
    state.enqueue(job: 2)
    let left = state.leave()
    #expect(left == [.waiter(1, Self.contexts[1]), .job(2)])
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
        guard reference.holder != nil else { continue }
        for first in [false, true] where reference.holder != context {
          var waiting = state
          var expectedWaiting = reference
          waiting.enqueue(waiter: nextID, of: context, first: first)
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
      var giving = state
      var expectedGiving = reference
      let action = giving.giveBack(by: holder)
      let expectedAction = expectedGiving.giveBack()
      #expect(action == expectedAction)
      explore(giving, expectedGiving, depth: depth - 1, nextID: nextID)
      for case .waiter(let id, _) in reference.queue {
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
      if holder != nil { return false }
      holder = context
      return true
    }

    mutating func enqueueWaiter(_ id: UInt, _ context: ObjectIdentifier, first: Bool) {
      if first {
        queue = [.waiter(id, context)] + queue
      } else {
        queue += [.waiter(id, context)]
      }
    }

    mutating func removeWaiter(_ id: UInt) {
      queue = queue.filter { !$0.isWaiter(id) }
    }

    mutating func giveBack() -> TurnState.GiveBackAction {
      progress += 1
      guard let next = queue.first else {
        holder = nil
        return .free
      }
      queue.removeFirst()
      switch next {
      case .waiter(let id, let context):
        holder = context
        return .grant(id)
      case .job(let id):
        return .run(id)
      }
    }
  }
}

extension TurnState.Entry {
  fileprivate func isWaiter(_ id: UInt) -> Bool {
    if case .waiter(id, _) = self { true } else { false }
  }
}
