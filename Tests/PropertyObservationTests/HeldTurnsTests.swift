import Testing

@testable import PropertyObservation

/// The turns one thread holds: a stack of graphs, the first in a field of its own, and past four
/// an index of identities (see `HeldTurns`).
@Suite("Held turns")
struct HeldTurnsTests {
  /// Takes eight turns and gives them back one by one, checking after every step what is held,
  /// in which order, and what is not: the steps cross both the first slot's edge and the index's.
  @Test func turnsAreHeldInTakingOrderAcrossTheFirstSlotAndTheIndex() {
    let graphs = (0..<8).map { _ in PropagationGraph() }
    let stranger = PropagationGraph()
    var held = HeldTurns()
    #expect(held.isEmpty && held.count == 0)
    #expect(!held.contains(graphs[0]))
    #expect(held.firstIndex { $0 === graphs[0] } == nil)

    for taken in 0..<graphs.count {
      held.append(graphs[taken])
      let notYet = Array(graphs[(taken + 1)...]) + [stranger]
      expectHolding(held, exactly: graphs[...taken], not: notYet)
    }
    for left in (0..<graphs.count).reversed() {
      held.removeLast()
      let givenBack = Array(graphs[left...]) + [stranger]
      expectHolding(held, exactly: graphs[..<left], not: givenBack)
    }
    #expect(held.isEmpty)
  }

  /// A graph taken again after the index was dropped is found again, and one given back is not.
  @Test func aTurnTakenAgainAfterTheIndexWasDroppedIsFound() {
    let graphs = (0..<6).map { _ in PropagationGraph() }
    var held = HeldTurns()
    for graph in graphs { held.append(graph) }
    held.removeLast()
    held.removeLast()
    let again = PropagationGraph()
    held.append(again)
    held.append(graphs[5])
    expectHolding(held, exactly: graphs[..<4] + [again, graphs[5]], not: [graphs[4]])
  }

  private func expectHolding(
    _ held: HeldTurns, exactly expected: some BidirectionalCollection<PropagationGraph>,
    not absent: [PropagationGraph], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(held.count == expected.count, sourceLocation: sourceLocation)
    #expect(held.isEmpty == expected.isEmpty, sourceLocation: sourceLocation)
    if let last = expected.last {
      #expect(held.last === last, sourceLocation: sourceLocation)
    }
    for (position, graph) in expected.enumerated() {
      #expect(held.contains(graph), sourceLocation: sourceLocation)
      #expect(held.firstIndex { $0 === graph } == position, sourceLocation: sourceLocation)
    }
    for graph in absent {
      #expect(!held.contains(graph), sourceLocation: sourceLocation)
      #expect(held.firstIndex { $0 === graph } == nil, sourceLocation: sourceLocation)
    }
  }
}
