import TestSupport
import Testing

@testable import PropertyObservation

/// A stand-in derived node that records when it is recomputed.
private final class RecordingNode: PropagationNode {
  var rank: Int
  let name: String
  let log: RecordingLog<String>

  init(_ name: String, rank: Int, log: RecordingLog<String>) {
    self.name = name
    self.rank = rank
    self.log = log
  }

  func recompute(in context: ObservationContext) {
    log.append(name)
  }
}

/// Issue 32, items 1 and 2: the structures a propagation keeps per thread, whose cost per
/// operation must not depend on how many observables it touches. (Their speed is measured in
/// the Benchmarks package's scale table; these tests pin the order they keep.)
@Suite("Propagation at scale")
struct PropagationScaleTests {
  @Test func staleNodesComeOutLowestRankFirstAndInSchedulingOrderAmongEqualRanks() {
    let log = RecordingLog<String>()
    var heap = StaleNodeHeap()
    let ranks = [3, 1, 2, 1, 3, 0, 2, 1, 0, 3]
    let nodes = ranks.enumerated().map { index, rank in
      RecordingNode("r\(rank)#\(index)", rank: rank, log: log)
    }
    for node in nodes { heap.insert(node) }
    while let node = heap.popLowest() { node.recompute(in: .current) }
    #expect(
      log.events == [
        "r0#5", "r0#8", "r1#1", "r1#3", "r1#7", "r2#2", "r2#6", "r3#0", "r3#4", "r3#9",
      ])
    #expect(heap.isEmpty)
  }

  @Test func nodesScheduledWhileTakingKeepTheOrderOfEqualRanks() {
    // A recomputation schedules higher nodes into the pass that is running: inserting between
    // removals must keep the same order as inserting everything first.
    let log = RecordingLog<String>()
    var heap = StaleNodeHeap()
    for index in 0..<50 { heap.insert(RecordingNode("a\(index)", rank: 5, log: log)) }
    var taken: [String] = []
    var added = 0
    while let node = heap.popLowest() {
      node.recompute(in: .current)
      taken.append(log.events.last ?? "")
      if added < 50 {
        heap.insert(RecordingNode("b\(added)", rank: 6, log: log))
        heap.insert(RecordingNode("c\(added)", rank: 5, log: log))
        added += 1
      }
    }
    let expected =
      (0..<50).map { "a\($0)" } + (0..<50).map { "c\($0)" } + (0..<50).map { "b\($0)" }
    #expect(taken == expected)
  }

  @Test func aNodeWhoseRankRoseWhileWaitingComesOutAtItsNewRank() {
    let log = RecordingLog<String>()
    var heap = StaleNodeHeap()
    let risen = RecordingNode("risen", rank: 1, log: log)
    let first = RecordingNode("first", rank: 2, log: log)
    let second = RecordingNode("second", rank: 4, log: log)
    let later = RecordingNode("later", rank: 4, log: log)
    for node in [risen, first, second] { heap.insert(node) }
    risen.rank = 4
    heap.insert(later)
    while let node = heap.popLowest() { node.recompute(in: .current) }
    // Among rank 4 it keeps the place of its scheduling: before both others.
    #expect(log.events == ["first", "risen", "second", "later"])
  }

  @Test func aTransactionOverManyObservablesDeliversEachOnceInFirstChangeOrder() {
    let count = 300
    let sources = (0..<count).map { Observable($0) }
    let log = RecordingLog<String>()
    let tokens = sources.enumerated().map { index, source in
      source.observe(options: [.old, .new]) { value, option in
        log.append("\(index) \(option == .old ? "old" : "new") \(value)")
      }
    }
    withObservationTransaction {
      // Every other source first, then all of them, each twice: the second and third sets of a
      // source join the change its first set recorded.
      for index in stride(from: 0, to: count, by: 2) { sources[index].value = -1 }
      for index in 0..<count {
        sources[index].value = index + 1000
        sources[index].value = index + 2000
      }
    }
    let order = Array(stride(from: 0, to: count, by: 2)) + Array(stride(from: 1, to: count, by: 2))
    let expected = order.flatMap { ["\($0) old \($0)", "\($0) new \($0 + 2000)"] }
    #expect(log.events == expected)
    withExtendedLifetime(tokens) {}
  }

  @Test func aCombineLatestFanOutRecomputesEachCombinationOnceInBuildOrder() {
    let source = Observable(0)
    let other = Observable(0)
    let log = RecordingLog<String>()
    let combined = (0..<200).map { index in
      source.combineLatest(other.map { $0 + index })
    }
    let tokens = combined.enumerated().map { index, observable in
      observable.observe { pair, _ in log.append("\(index) \(pair.0) \(pair.1)") }
    }
    withObservationTransaction {
      source.value = 1
      other.value = 10
    }
    #expect(log.events == (0..<200).map { "\($0) 1 \(10 + $0)" })
    withExtendedLifetime(tokens) {}
  }
}
