import Testing

@testable import PropertyObservation

/// The per-propagation counts of a derived pipeline: one propagation inline, the others in a
/// dictionary, and never the same propagation in both.
@Suite("Propagation counts")
struct PropagationCountsTests {
  private static func tag(_ serial: UInt64) -> PropagationTag {
    PropagationTag(context: ObjectIdentifier(PropagationCountsTests.self), serial: serial)
  }

  @Test func countsEachPropagationSeparately() {
    var counts = PropagationCounts()
    for serial: UInt64 in [1, 2, 1, 3, 2, 1] { counts.increment(Self.tag(serial)) }
    #expect(counts[Self.tag(1)] == 3)
    #expect(counts[Self.tag(2)] == 2)
    #expect(counts[Self.tag(3)] == 1)
    #expect(counts[Self.tag(4)] == 0)
    counts.decrement(Self.tag(2))
    counts.decrement(Self.tag(1))
    #expect(counts[Self.tag(1)] == 2)
    #expect(counts[Self.tag(2)] == 1)
  }

  @Test func aPropagationCountedElsewhereIsNotTakenInlineWhenTheInlineOneEnds() {
    // 1 is inline, 2 overflows; once 1 is gone, more of 2 must add to its count, not start a
    // second one inline.
    var counts = PropagationCounts()
    counts.increment(Self.tag(1))
    counts.increment(Self.tag(2))
    counts.decrement(Self.tag(1))
    counts.increment(Self.tag(2))
    #expect(counts[Self.tag(2)] == 2)
    counts.decrement(Self.tag(2))
    counts.decrement(Self.tag(2))
    #expect(counts[Self.tag(2)] == 0)
    counts.increment(Self.tag(3))
    #expect(counts[Self.tag(3)] == 1)
  }

  @Test func removingAllOfAPropagationLeavesTheOthers() {
    var counts = PropagationCounts()
    for serial: UInt64 in [1, 1, 2, 2, 2] { counts.increment(Self.tag(serial)) }
    counts.removeAll(of: Self.tag(1))
    counts.removeAll(of: Self.tag(5))
    #expect(counts[Self.tag(1)] == 0)
    #expect(counts[Self.tag(2)] == 3)
    counts.removeAll(of: Self.tag(2))
    #expect(counts[Self.tag(2)] == 0)
  }

  @Test func countingDownAPropagationWithoutEventsStops() async {
    await #expect(processExitsWith: .failure) {
      var counts = PropagationCounts()
      counts.increment(PropagationTag(context: ObjectIdentifier(Int.self), serial: 1))
      counts.decrement(PropagationTag(context: ObjectIdentifier(Int.self), serial: 2))
    }
  }
}
