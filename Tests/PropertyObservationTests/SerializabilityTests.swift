import Dispatch
import Foundation
import PropertyObservation
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// Issue 40: each graph runs one propagation at a time, whole (see the contract in the Threading
// article). `PropagationHistory` (TestSupport) records every propagation and every publication
// and checks that they fit one serial order of whole propagations; the threaded model test drives
// it over random graphs, the mutation tests show it fails on broken histories, and each break the
// issue lists is pinned by a regression test of its own.

// MARK: - Shared helpers

/// A hash of several values, so that a combination is one `Int` the reference model recomputes;
/// two combinations that collide would only hide a violation, never invent one.
private func mix(_ values: [Int]) -> Int {
  var hash = 0x1234_5678
  for value in values { hash = (hash ^ value) &* 0x100_0000_01B3 }
  return hash
}

private let transforms: [@Sendable (Int) -> Int] = [
  { $0 &* 2 }, { $0 % 7 }, { $0 / 3 }, { $0 &+ 11 },
]
private let predicates: [@Sendable (Int) -> Bool] = [{ $0 % 2 == 0 }, { $0 % 3 != 0 }]

private func observableOptions(_ options: Set<HistoryOption>) -> ObservableOptions {
  var result: ObservableOptions = []
  if options.contains(.initial) { result.insert(.initial) }
  if options.contains(.old) { result.insert(.old) }
  if options.contains(.new) { result.insert(.new) }
  return result
}

private func historyOption(_ option: ObservableOptions) -> HistoryOption {
  switch option {
  case .initial: .initial
  case .old: .old
  default: .new
  }
}

/// Registers an observer of `node` whose calls `history` records (the value `encode`d), then
/// runs `reaction` on each call's option and value.
private func record<Value>(
  _ observable: ReadOnlyObservable<Value>, node: Int, options: Set<HistoryOption>,
  in history: PropagationHistory, encode: @escaping (Value) -> Int,
  reaction: @escaping (HistoryOption, Int) -> Void = { _, _ in }
) -> ObservationToken {
  let observer = history.newObserver(node: node, options: options)
  return history.registering(observer) {
    observable.observe(options: observableOptions(options)) { value, option in
      let encoded = encode(value)
      history.publish(observer, historyOption(option), encoded)
      reaction(historyOption(option), encoded)
    }
  }
}

private func record(
  _ observable: ReadOnlyObservable<Int>, node: Int, options: Set<HistoryOption>,
  in history: PropagationHistory, reaction: @escaping (HistoryOption, Int) -> Void = { _, _ in }
) -> ObservationToken {
  record(observable, node: node, options: options, in: history, encode: { $0 }, reaction: reaction)
}

/// Sets `root` (node `node`) to `value` as a propagation of model thread `thread`.
private func set(
  _ root: Observable<Int>, node: Int, to value: Int, thread: Int, in history: PropagationHistory
) {
  history.propagation(thread: thread, stores: [(node, value)]) { root.value = value }
}

/// Tokens kept to the end of a run, from any thread.
private typealias TokenJar = RecordingLog<ObservationToken>

// MARK: - Random graphs

/// A random graph of 3–5 roots in two groups that no derived value joins, and 4–10 derived
/// values, each within one group; node ids are those of `nodes`.
private struct RandomGraph: Sendable {
  let nodes: [HistoryNode]
  let observables: [ReadOnlyObservable<Int>]
  /// The roots, `roots[i]` being node `i`.
  let roots: [Observable<Int>]
  /// The roots of each group.
  let groups: [[Int]]
  let summary: String
}

private func makeGraph(seed: UInt64) -> RandomGraph {
  var random = SplitMix64(seed: seed)
  func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }
  let rootCount = 3 + pick(3)
  var nodes: [HistoryNode] = []
  var observables: [ReadOnlyObservable<Int>] = []
  var roots: [Observable<Int>] = []
  var groupOf: [Int] = []
  var summary: [String] = []
  for index in 0..<rootCount {
    let root = Observable(0)
    roots.append(root)
    observables.append(root)
    nodes.append(.root(initial: 0))
    groupOf.append(index < rootCount / 2 ? 0 : 1)
    summary.append("#\(index) root")
  }
  let groups = [0, 1].map { group in (0..<rootCount).filter { groupOf[$0] == group } }
  let derivedCount = 4 + pick(7)
  for position in 0..<derivedCount {
    let group = pick(2)
    let members = groupOf.indices.filter { groupOf[$0] == group }
    var member: Int { members[pick(members.count)] }
    // The first two are a three-deep nested combineLatest and a flatMapLatest, so that every
    // graph has both; the rest are random.
    let kind = position < 2 ? 4 + position : pick(6)
    switch kind {
    case 0:
      let (source, transform) = (member, pick(transforms.count))
      nodes.append(.map(source, transforms[transform]))
      observables.append(observables[source].map(transforms[transform]))
      summary.append("map#\(transform)(#\(source))")
    case 1:
      let (source, predicate) = (member, pick(predicates.count))
      nodes.append(.filter(source, initial: -7, predicates[predicate]))
      observables.append(observables[source].filter(initial: -7, predicates[predicate]))
      summary.append("filter#\(predicate)(#\(source))")
    case 2:
      let source = member
      nodes.append(.removeDuplicates(source))
      observables.append(observables[source].removeDuplicates())
      summary.append("removeDuplicates(#\(source))")
    case 3:
      let (x, y) = (member, member)
      nodes.append(.combine([x, y], mix))
      observables.append(observables[x].combineLatest(observables[y]).map { mix([$0.0, $0.1]) })
      summary.append("combineLatest(#\(x), #\(y))")
    case 4:
      let (w, x, y, z) = (member, member, member, member)
      nodes.append(.combine([w, x, y, z], mix))
      let nested = observables[w].combineLatest(
        observables[x].combineLatest(observables[y].combineLatest(observables[z])))
      observables.append(nested.map { mix([$0.0, $0.1.0, $0.1.1.0, $0.1.1.1]) })
      summary.append("#\(w).combineLatest(#\(x).combineLatest(#\(y).combineLatest(#\(z))))")
    default:
      let selector = member
      let candidates = groups[group]
      let inners = candidates.map { observables[$0] }
      let select: @Sendable (Int) -> Int = { abs($0 % candidates.count) }
      nodes.append(.switchTo(selector: selector, candidates: candidates, select: select))
      observables.append(observables[selector].flatMapLatest { inners[select($0)] })
      summary.append("flatMapLatest(#\(selector) -> \(candidates))")
    }
    groupOf.append(group)
    summary[summary.count - 1] = "#\(nodes.count - 1) " + summary[summary.count - 1]
  }
  return RandomGraph(
    nodes: nodes, observables: observables, roots: roots, groups: groups,
    summary: summary.joined(separator: ", "))
}

private let observerOptions: [Set<HistoryOption>] = [
  [.new], [.old, .new], [.initial, .new], [.initial, .old, .new],
]

/// One seeded run: observers on every node (some roots' observers set a root of the other group
/// from their callback), `threads` threads setting roots, some in transactions, and registering
/// `.initial` observers; then one last set of every root. Returns the checker's report.
private func runRandomGraph(seed: UInt64, threads: Int, steps: Int) -> (HistoryReport, String) {
  let graph = makeGraph(seed: seed)
  let history = PropagationHistory(nodes: graph.nodes)
  let tokens = TokenJar()
  var random = SplitMix64(seed: seed ^ 0xABCD)
  for (node, observable) in graph.observables.enumerated() {
    guard node < graph.roots.count else {
      let options = observerOptions[Int.random(in: 0..<observerOptions.count, using: &random)]
      tokens.append(record(observable, node: node, options: options, in: history))
      continue
    }
    // Every root's first observer is its anchor, with `.new`, which the checker reads the order
    // from; a third of them set a root of the other group when a top-level value divisible by 4
    // arrives (nested values are negative, so reactions never chain).
    let others = graph.groups.first { !$0.contains(node) }!
    let reacts = Int.random(in: 0..<3, using: &random) == 0
    let roots = graph.roots
    tokens.append(
      record(observable, node: node, options: [.old, .new], in: history) { option, value in
        guard reacts, option == .new, value > 0, value % 4 == 0 else { return }
        let target = others[value % others.count]
        let nested = history.newNestedValue()
        history.propagation(thread: -1, nested: true, stores: [(target, nested)]) {
          roots[target].value = nested
        }
      })
  }
  runConcurrently(threads) { thread in
    var random = SplitMix64(seed: seed &* 0x1_0000 &+ UInt64(thread))
    func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }
    var sequence = 0
    func nextValue() -> Int {
      sequence += 1
      return (thread + 1) * 1_000_000 + sequence
    }
    for _ in 0..<steps {
      switch pick(100) {
      case 0..<15:
        let group = graph.groups[pick(2)]
        let stores = (0..<(2 + pick(2))).map { _ in
          (node: group[pick(group.count)], value: nextValue())
        }
        history.propagation(thread: thread, stores: stores) {
          withObservationTransaction {
            for store in stores { graph.roots[store.node].value = store.value }
          }
        }
      case 15..<25:
        let node = pick(graph.nodes.count)
        let options = observerOptions[pick(observerOptions.count)]
        tokens.append(record(graph.observables[node], node: node, options: options, in: history))
      default:
        let root = pick(graph.roots.count)
        set(graph.roots[root], node: root, to: nextValue(), thread: thread, in: history)
      }
    }
  }
  for (node, root) in graph.roots.enumerated() {
    set(root, node: node, to: 900_000_000 + node, thread: threads, in: history)
  }
  let report = history.check()
  for token in tokens.events { token.cancel() }
  return (report, graph.summary)
}

// MARK: - The checker on hand-built histories

/// `a`, `a.map { $0 * 10 }` and their combination: a diamond.
private let diamond: [HistoryNode] = [
  .root(initial: 0), .map(0, { $0 * 10 }), .combine([0, 1], mix),
]
/// An anchor `[.old, .new]` on `a`, and `[.new]` on the combination.
private let diamondObservers = [
  HistoryObserver(node: 0, options: [.old, .new]), HistoryObserver(node: 2, options: [.new]),
]

/// The events of propagation `step` setting `a` from `old` to `new` and the combination
/// publishing `pairs`.
private func diamondStep(_ step: Int, old: Int, new: Int, pairs: [(Int, Int)]) -> [HistoryEvent] {
  [
    .begin(step: step, thread: 0, nested: false), .store(step: step, node: 0, value: new),
    .publication(observer: 0, option: .old, value: old, thread: 1),
    .publication(observer: 0, option: .new, value: new, thread: 1),
  ]
    + pairs.map { .publication(observer: 1, option: .new, value: mix([$0.0, $0.1]), thread: 1) }
    + [.end(step: step)]
}

@Suite("Serializability of propagations across threads (issue 40)")
struct SerializabilityTests {
  // MARK: The checker

  @Test func theCheckerAcceptsASerialHistory() {
    let events =
      diamondStep(1, old: 0, new: 1, pairs: [(1, 10)])
      + diamondStep(2, old: 1, new: 2, pairs: [(2, 20)])
    let report = PropagationHistory.check(
      nodes: diamond, observers: diamondObservers, events: events)
    #expect(report.isClean, "\(report)")
    #expect(report.propagations == 2)
  }

  @Test func theCheckerReportsASplitDiamond() {
    // Another thread's change lands between the diamond's two paths: (2, 10) never existed.
    let events =
      diamondStep(1, old: 0, new: 1, pairs: [(1, 10)])
      + diamondStep(2, old: 1, new: 2, pairs: [(2, 10), (2, 20)])
    let report = PropagationHistory.check(
      nodes: diamond, observers: diamondObservers, events: events)
    #expect(report.impossible == 1, "\(report)")
    #expect(!report.isClean)
  }

  @Test func theCheckerReportsAFoldedPropagation() {
    // Two propagations delivered as one: the combination never published (1, 10).
    let events =
      diamondStep(1, old: 0, new: 1, pairs: [])
      + diamondStep(2, old: 1, new: 2, pairs: [(2, 20)])
    let report = PropagationHistory.check(
      nodes: diamond, observers: diamondObservers, events: events)
    #expect(report.lost == 1, "\(report)")
  }

  @Test func theCheckerReportsABrokenOldChainAndADuplicate() {
    var events = diamondStep(1, old: 0, new: 1, pairs: [(1, 10), (1, 10)])
    events += diamondStep(2, old: 0, new: 2, pairs: [(2, 20)])
    let report = PropagationHistory.check(
      nodes: diamond, observers: diamondObservers, events: events)
    #expect(report.brokenOldChains == 1, "\(report)")
    #expect(report.duplicates == 1, "\(report)")
  }

  @Test func theCheckerReportsAnOrderingCycleAndAnOrderAgainstRealTime() {
    // Two transactions over `a` and `b`: `a`'s observer saw P before Q, `b`'s Q before P.
    let nodes: [HistoryNode] = [.root(initial: 0), .root(initial: 0)]
    let observers = [
      HistoryObserver(node: 0, options: [.new]), HistoryObserver(node: 1, options: [.new]),
    ]
    let cycle: [HistoryEvent] = [
      .begin(step: 1, thread: 0, nested: false), .store(step: 1, node: 0, value: 1),
      .store(step: 1, node: 1, value: 1),
      .begin(step: 2, thread: 1, nested: false), .store(step: 2, node: 0, value: 2),
      .store(step: 2, node: 1, value: 2),
      .publication(observer: 0, option: .new, value: 1, thread: 1),
      .publication(observer: 1, option: .new, value: 2, thread: 2),
      .publication(observer: 0, option: .new, value: 2, thread: 2),
      .publication(observer: 1, option: .new, value: 1, thread: 1),
      .end(step: 1), .end(step: 2),
    ]
    let report = PropagationHistory.check(nodes: nodes, observers: observers, events: cycle)
    #expect(report.ordering >= 1, "\(report)")
    // Q began after P's set returned, yet took effect first.
    let late: [HistoryEvent] = [
      .begin(step: 1, thread: 0, nested: false), .store(step: 1, node: 0, value: 1),
      .end(step: 1),
      .begin(step: 2, thread: 1, nested: false), .store(step: 2, node: 0, value: 2),
      .publication(observer: 0, option: .new, value: 2, thread: 2),
      .publication(observer: 0, option: .new, value: 1, thread: 2),
      .end(step: 2),
    ]
    let lateReport = PropagationHistory.check(nodes: nodes, observers: observers, events: late)
    #expect(lateReport.ordering >= 1, "\(lateReport)")
  }

  @Test func theCheckerReportsARegistrationThatMissedALaterSet() {
    // Registered before the set began, never called: the lost update of the stress harness.
    let observers = diamondObservers + [HistoryObserver(node: 0, options: [.new])]
    let events: [HistoryEvent] =
      [.registering(observer: 2), .registered(observer: 2)]
      + diamondStep(1, old: 0, new: 1, pairs: [(1, 10)])
    let report = PropagationHistory.check(nodes: diamond, observers: observers, events: events)
    #expect(report.lost == 1, "\(report)")
  }

  // MARK: The threaded model test

  /// The checker's control: on one thread, every engine runs propagations one at a time, so any
  /// violation found here is the checker's (or the model's) mistake.
  @Test func randomGraphsSetFromOneThreadPassTheChecker() async {
    for seed in UInt64(1)...12 {
      let (report, summary) = await onItsOwnThread {
        runRandomGraph(seed: seed, threads: 1, steps: 300)
      }
      #expect(report.isClean, "seed \(seed), one thread, graph \(summary):\n\(report)")
    }
  }

  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func randomGraphsSetFromSeveralThreadsPublishOneSerialOrder(seed: UInt64) async {
    let threads = 2 + Int(seed % 3)
    let (report, summary) = await onItsOwnThread {
      runRandomGraph(seed: seed, threads: threads, steps: 150)
    }
    #expect(
      report.isClean,
      """
      seed \(seed), \(threads) threads, graph \(summary):
      \(report)
      """)
  }
}
