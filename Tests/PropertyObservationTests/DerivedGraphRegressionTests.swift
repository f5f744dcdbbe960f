import Foundation
import PropertyObservation
import TestSupport
import Testing

/// Issue 31, items 3 and 4: derived values publish once per change and never a combination that
/// never existed, whatever the graph (nested `flatMapLatest`) and whichever threads set it.
@Suite("Derived graph regressions")
struct DerivedGraphRegressionTests {
  // MARK: - Item 3: ranks follow the selected inner

  @Test func aFlatMapLatestOverAnInnerDownstreamOfAFlatMapLatestPublishesOnlyRealPairs() {
    let source = Observable(0)
    let tens = source.map { $0 }.flatMapLatest { Observable($0 * 10) }
    let pair = source.flatMapLatest { s in tens.map { "\(s):\($0)" } }
    let log = RecordingLog<String>()
    let token = pair.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    source.value = 1
    source.value = 2
    #expect(log.events == ["0:0", "1:10", "2:20"])
    withExtendedLifetime(token) {}
  }

  @Test func switchingToAnInnerOfHigherRankWaitsForItsNewValue() {
    // The selection moves from a constant (rank 0) to an inner that the same change updates
    // further down the graph: the switch must read the inner's new value, not its old one.
    let source = Observable(0)
    let deep = source.map { $0 }.map { $0 }.combineLatest(source).map { $0.0 + $0.1 }
    let constant = Observable(-1)
    let selected = source.flatMapLatest { $0 == 0 ? constant : deep }
    let log = RecordingLog<Int>()
    let token = selected.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    source.value = 1
    source.value = 2
    source.value = 0
    #expect(log.events == [-1, 2, 4, -1])
    withExtendedLifetime(token) {}
  }

  @Test func aValueBuiltOnASwitchThatRisesWaitsForItInTheSamePropagation() {
    // `both` was scheduled by the source's round at the rank it had then; the switch raises the
    // flatMapLatest, and `both` with it, above `deep`: it must not run at its old rank.
    let source = Observable(0)
    let deep = source.map { $0 }.map { $0 }.combineLatest(source).map { $0.0 + $0.1 }
    let constant = Observable(-1)
    let selected = source.flatMapLatest { $0 == 0 ? constant : deep }
    let both = selected.combineLatest(source)
    let log = RecordingLog<String>()
    let token = both.observe(options: [.initial, .new]) { value, _ in
      log.append("\(value.0)@\(value.1)")
    }
    source.value = 1
    source.value = 2
    #expect(log.events == ["-1@0", "2@1", "4@2"])
    withExtendedLifetime(token) {}
  }

  @Test func nestedFlatMapLatestAndCombineLatestPublishOnceWithTheFinalValuesAtEveryDepth() {
    for depth in 1...4 {
      let source = Observable(0)
      // Each level selects an inner built on the level below and combines it with the source,
      // so every level sits downstream of a deeper flatMapLatest; the lower levels reach the
      // source through more maps, so a level's own source is no deeper than the one it selects.
      var level: ReadOnlyObservable<Int> = source.map { $0 }
      for step in 1...depth {
        let below = level
        var outer: ReadOnlyObservable<Int> = source
        for _ in step..<depth { outer = outer.map { $0 } }
        level = outer.flatMapLatest { s in below.combineLatest(source).map { $0.0 + $0.1 + s } }
      }
      let top = level.combineLatest(source)
      let log = RecordingLog<String>()
      let token = top.observe(options: [.initial, .new]) { value, _ in
        log.append("\(value.0)@\(value.1)")
      }
      for value in 1...3 { source.value = value }
      // Level k holds (k + 2) * s: level 0 holds s, and each level adds two more s.
      let expected = (0...3).map { s in "\((2 * depth + 1) * s)@\(s)" }
      #expect(log.events == expected, "depth \(depth)")
      withExtendedLifetime(token) {}
    }
  }

  @Test func selectingAnObservableDerivedFromTheFlatMapLatestItselfStopsTheProgram() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let source = Observable(0)
      let itself = SelectedLater()
      let selected = source.flatMapLatest { value in
        value == 0 ? Observable(0) : itself.observable!.map { $0 + 1 }
      }
      itself.observable = selected
      source.value = 1
    }
    // The message is printed in optimised builds too (`require`, not `precondition`).
    expectStandardError(
      of: result, toSay: "flatMapLatest selected an observable derived from the flatMapLatest")
  }

  // MARK: - Item 4: another thread's change between two paths of one propagation

  @Test func anotherThreadsChangeDoesNotSplitADiamondsPropagation() async {
    await onItsOwnThread {
      let a = Observable(0)
      let d = Observable(0)
      let tens = d.map { $0 * 10 }
      let round = Gate("d's round between its two paths")
      // Registered after `tens` and before the combination: d's round stops here after the path
      // through `tens` has reached the combination, and before the direct path has.
      let slow = d.observe { value, _ in
        if value == 1 { round.block() }
      }
      let combined = combineLatest(a, d, tens)
      let log = RecordingLog<String>()
      let token = combined.observe(options: [.initial, .new]) { value, _ in
        log.append("(\(value.0),\(value.1),\(value.2))")
      }
      round.runOnAnotherThread {
        d.value = 1
      } whileBlocked: {
        a.value = 1
      }
      // d's propagation started first: it is published first, once, with both of its paths.
      #expect(log.events == ["(0,0,0)", "(0,1,10)", "(1,1,10)"])
      #expect(combined.value == (1, 1, 10))
      withExtendedLifetime((slow, token)) {}
    }
  }

  @Test func anotherThreadsChangeComesAfterTheWholePropagationOfTheSource() async {
    await onItsOwnThread {
      // y's propagation holds two changes of y: 1, then 2, set by its own observer while x = 1
      // is set on the other thread. The pair is recomputed once per propagation: y's publishes
      // (0,2), its final state, and x's change, which waited for it, (1,2).
      let x = Observable(0)
      let y = Observable(0)
      let pair = x.combineLatest(y)
      let round = Gate("y's round after the pair has its change")
      // Registered after the pair: y's round stops here once the pair has received y = 1.
      let slow = y.observe { value, _ in
        guard value == 1 else { return }
        round.block()
        y.value = 2
      }
      let log = RecordingLog<String>()
      let token = pair.observe(options: [.initial, .new]) { value, _ in
        log.append("(\(value.0),\(value.1))")
      }
      round.runOnAnotherThread {
        y.value = 1
      } whileBlocked: {
        x.value = 1
      }
      #expect(log.events == ["(0,0)", "(0,2)", "(1,2)"])
      #expect(pair.value == (1, 2))
      withExtendedLifetime((slow, token)) {}
    }
  }

  @Test func diamondsSetFromSeveralThreadsPublishOnlyStatesThatExisted() async {
    await onItsOwnThread {
      // Two threads set the two sources of diamonds; an ordinary observer of `d` yields in the
      // middle of d's rounds so the other thread's changes land between the two paths. Every
      // published state must be one that existed: the derived path agrees with its source, and
      // each source's values are published in the order they were set.
      for _ in 0..<20 {
        let a = Observable(0)
        let d = Observable(0)
        let tens = d.map { $0 * 10 }
        let slow = d.observe { _, _ in
          for _ in 0..<3 { sched_yield() }
        }
        let triple = combineLatest(a, d, tens)
        let sum = a.map { $0 * 2 }.combineLatest(tens.combineLatest(a))
        let triples = RecordingLog<(Int, Int, Int)>()
        let sums = RecordingLog<(Int, Int, Int)>()
        let tokens = [
          triple.observe { value, _ in triples.append(value) },
          sum.observe { value, _ in sums.append((value.0, value.1.0, value.1.1)) },
        ]
        let count = 200
        runConcurrently(2) { index in
          for value in 1...count {
            if index == 0 { d.value = value } else { a.value = value }
          }
        }
        let published = triples.events
        #expect(published.allSatisfy { $0.2 == $0.1 * 10 }, "a triple mixed two values of d")
        #expect(zip(published, published.dropFirst()).allSatisfy { $0.0 <= $1.0 && $0.1 <= $1.1 })
        #expect(published.last.map { [$0.0, $0.1, $0.2] } == [count, count, count * 10])
        let summed = sums.events
        #expect(summed.last.map { [$0.0, $0.1, $0.2] } == [count * 2, count * 10, count])
        // `sum` reads `a` and `tens` (of `d`), so `a` and `d` are one graph: a's propagation
        // never overlaps d's, and `sum` never pairs the new `a * 2` with the old `a`.
        #expect(summed.allSatisfy { $0.0 == $0.2 * 2 }, "a sum mixed two values of a")
        withExtendedLifetime((slow, tokens)) {}
      }
    }
  }
}

/// A reference a `flatMapLatest`'s transform reads after the call that built it has returned.
private final class SelectedLater: @unchecked Sendable {
  // Written once, before the transform reads it, on the same thread.
  var observable: ReadOnlyObservable<Int>?
}
