import Dispatch
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

  @Test func aTransactionsSetThatWouldDeadlockWithAnotherTransactionRunsAfterIt() async {
    await onItsOwnThread {
      // The first transaction holds the observable's turn until it ends, and waits meanwhile for
      // the second one's first set: that set cannot wait, so the whole second transaction is
      // queued, with its later sets, and runs as one transaction after the first: one round
      // from 2 to 12. Every `.old` is the `.new` before it.
      let shared = Observable(0)
      let log = RecordingLog<String>()
      let token = shared.observe(options: [.old, .new]) { value, option in
        log.append("\(option == .old ? "old" : "new") \(value)")
      }
      let firstSet = DispatchSemaphore(value: 0)
      let otherSet = DispatchSemaphore(value: 0)
      let firstEnded = DispatchSemaphore(value: 0)
      let first = runInBackground {
        withObservationTransaction {
          shared.value = 1
          firstSet.signal()
          _ = otherSet.wait(timeout: .now() + testTimeout)
          shared.value = 2
        }
        firstEnded.signal()
      }
      let second = runInBackground {
        _ = firstSet.wait(timeout: .now() + testTimeout)
        withObservationTransaction {
          shared.value = 10
          otherSet.signal()
          _ = firstEnded.wait(timeout: .now() + testTimeout)
          shared.value = 11
          shared.value = 12
        }
      }
      await first.finished("the first transaction")
      await second.finished("the second transaction")
      #expect(log.events == ["old 0", "new 2", "old 2", "new 12"])
      withExtendedLifetime(token) {}
    }
  }

  /// Two transactions set two unrelated observables in opposite orders: each holds the turn of
  /// its first and waits for the other's (a cycle of waits). The one that finds the cycle undoes
  /// its stores and makes them again after the other has ended, so both observables see the two
  /// transactions in the same order, each whole, and end with the values of the same one.
  @Test func twoTransactionsWaitingForEachOthersTurnsRunOneAfterTheOther() async {
    await onItsOwnThread {
      let (a, b) = (Observable(0), Observable(0))
      let log = RecordingLog<String>()
      let tokens = [
        a.observe(options: [.old, .new]) { value, option in
          log.append("a \(option == .old ? "old" : "new") \(value)")
        },
        b.observe(options: [.old, .new]) { value, option in
          log.append("b \(option == .old ? "old" : "new") \(value)")
        },
      ]
      let firstHolds = DispatchSemaphore(value: 0)
      let secondHolds = DispatchSemaphore(value: 0)
      let first = runInBackground {
        withObservationTransaction {
          a.value = 1
          firstHolds.signal()
          _ = secondHolds.wait(timeout: .now() + testTimeout)
          b.value = 1
        }
      }
      let second = runInBackground {
        _ = firstHolds.wait(timeout: .now() + testTimeout)
        withObservationTransaction {
          b.value = 2
          secondHolds.signal()
          a.value = 2
        }
      }
      await first.finished("the first transaction")
      await second.finished("the second transaction")
      // Whichever ran first, both observables saw it first, whole.
      let firstWhole = ["a old 0", "a new 1", "b old 0", "b new 1"]
      let secondWhole = ["b old 0", "b new 2", "a old 0", "a new 2"]
      let inOrder = [
        firstWhole + ["b old 1", "b new 2", "a old 1", "a new 2"],
        secondWhole + ["a old 2", "a new 1", "b old 2", "b new 1"],
      ]
      #expect(inOrder.contains(log.events), "\(log.events)")
      #expect(a.value == b.value)
      withExtendedLifetime(tokens) {}
    }
  }

  @Test func aTransactionBegunWhileAnotherEndsDeliversItsOwnRound() {
    // A callback of the first transaction's rounds runs a second transaction that changes an
    // observable whose round in the first has not run yet: it joins the second one too, whose
    // end, inside the callback, delivers its round first.
    let trigger = Observable(0)
    let later = Observable(0)
    let log = RecordingLog<String>()
    let reacting = trigger.observe { value, _ in
      withObservationTransaction { later.value = value * 100 }
    }
    let watching = later.observe(options: [.old, .new]) { value, option in
      log.append("\(option == .old ? "old" : "new") \(value)")
    }
    withObservationTransaction {
      trigger.value = 1
      later.value = 5
    }
    #expect(log.events == ["old 5", "new 100", "old 0", "new 100"])
    withExtendedLifetime((reacting, watching)) {}
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
