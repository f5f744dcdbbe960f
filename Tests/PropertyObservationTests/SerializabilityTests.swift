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
  in history: PropagationHistory, encode: @escaping @Sendable (Value) -> Int,
  reaction: @escaping @Sendable (HistoryOption, Int) -> Void = { _, _ in }
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
  in history: PropagationHistory,
  reaction: @escaping @Sendable (HistoryOption, Int) -> Void = { _, _ in }
) -> ObservationToken {
  record(observable, node: node, options: options, in: history, encode: { $0 }, reaction: reaction)
}

/// Sets `root` (node `node`) to `value` as a propagation of model thread `thread`; `queueable`
/// for a set that the deadlock-avoidance rule may queue (see `HistoryEvent.begin`).
private func set(
  _ root: Observable<Int>, node: Int, to value: Int, thread: Int, queueable: Bool = false,
  in history: PropagationHistory
) {
  history.propagation(thread: thread, queueable: queueable, stores: [(node, value)]) {
    root.value = value
  }
}

/// Registers an observer of `node` whose callback is main-actor isolated, under `main`, which
/// stands for the main queue; `history` records its calls as isolation 0's.
private func recordOnMainActor(
  _ observable: ReadOnlyObservable<Int>, node: Int, options: Set<HistoryOption>,
  under main: ManualScheduler, in history: PropagationHistory
) -> ObservationToken {
  let observer = history.newObserver(node: node, options: options, isolation: 0)
  return history.registering(observer) {
    MainScheduler.withScheduler(.manual(main)) {
      observable.observe(options: observableOptions(options)) { @MainActor value, option in
        history.publish(observer, historyOption(option), value)
      }
    }
  }
}

/// A thread that runs `scheduler`'s queued work, standing for the main queue, until `stop()`.
private final class MainQueueStandIn: Sendable {
  private let scheduler: ManualScheduler
  private let stopped = RecordingLog<Bool>()
  private let running: BackgroundRun

  init(_ scheduler: ManualScheduler) {
    self.scheduler = scheduler
    let stopped = stopped
    running = runInBackground {
      while stopped.events.isEmpty {
        scheduler.runAll()
        usleep(20)
      }
    }
  }

  /// Stops the thread, then runs what is still queued, on the calling thread.
  func stop() {
    stopped.append(true)
    running.waitUntilFinished("the main queue's stand-in")
    while scheduler.pendingCount > 0 { scheduler.runAll() }
  }
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

/// One seeded run (each thread's steps one at a time if `oneAtATime` is given): observers on
/// every node (some roots' observers set a root of the other group
/// from their callback), `threads` threads setting roots, some in transactions, and registering
/// `.initial` observers; then one last set of every root. Returns the checker's report.
///
/// With `blocking`, one more observer of a root blocks, at most three times, in its callback
/// until another thread's set of a root of the same graph has returned (that set cannot wait: the
/// deadlock-avoidance rule queues it whole); `blocked` then holds whether each wait ended. Every
/// set of the threads may meet the blocked callback's propagation and be queued the same way
/// after 100 ms without progress, so each counts from its beginning only (`queueable`).
private func runRandomGraph(
  seed: UInt64, threads: Int, steps: Int, blocking: Bool = false, oneAtATime: NSLock? = nil
) -> (report: HistoryReport, summary: String, blocked: [Bool]) {
  let graph = makeGraph(seed: seed)
  let history = PropagationHistory(nodes: graph.nodes)
  let tokens = TokenJar()
  let blocked = RecordingLog<Bool>()
  var random = SplitMix64(seed: seed ^ 0xABCD)
  if blocking {
    // On the first root of the second group; the other thread sets its last root.
    let (root, target) = (graph.groups[1][0], graph.groups[1].last!)
    let roots = graph.roots
    let attempts = RecordingLog<Int>()
    tokens.append(
      record(graph.roots[root], node: root, options: [.new], in: history) { _, value in
        guard value > 0, value % 1_000_000 % 20 == 0 else { return }
        attempts.append(value)
        guard attempts.events.count <= 3 else { return }
        let returned = DispatchSemaphore(value: 0)
        let value = 800_000_000 + attempts.events.count
        _ = runInBackground {
          history.propagation(thread: 99, queueable: true, stores: [(target, value)]) {
            roots[target].value = value
          }
          returned.signal()
        }
        blocked.append(arrives(returned))
      })
  }
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
        history.propagation(thread: -1, queueable: true, stores: [(target, nested)]) {
          roots[target].value = nested
        }
      })
  }
  // Main-actor observers of every root and of the last derived node: their calls wait in one
  // mailbox, whose order the checker holds to the serial order across roots.
  let main = ManualScheduler()
  for node in Array(graph.roots.indices) + [graph.nodes.count - 1] {
    let options: Set<HistoryOption> = node % 2 == 0 ? [.new] : [.old, .new]
    tokens.append(
      recordOnMainActor(
        graph.observables[node], node: node, options: options, under: main, in: history))
  }
  let mainQueue = MainQueueStandIn(main)
  runConcurrently(threads) { thread in
    var random = SplitMix64(seed: seed &* 0x1_0000 &+ UInt64(thread))
    func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }
    var sequence = 0
    func nextValue() -> Int {
      sequence += 1
      return (thread + 1) * 1_000_000 + sequence
    }
    for _ in 0..<steps {
      oneAtATime?.lock()
      defer { oneAtATime?.unlock() }
      switch pick(100) {
      case 0..<15:
        let group = graph.groups[pick(2)]
        let stores = (0..<(2 + pick(2))).map { _ in
          (node: group[pick(group.count)], value: nextValue())
        }
        history.propagation(thread: thread, queueable: blocking, stores: stores) {
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
        set(
          graph.roots[root], node: root, to: nextValue(), thread: thread, queueable: blocking,
          in: history)
      }
    }
  }
  for (node, root) in graph.roots.enumerated() {
    set(root, node: node, to: 900_000_000 + node, thread: threads, in: history)
  }
  mainQueue.stop()
  let report = history.check()
  for token in tokens.events { token.cancel() }
  return (report, graph.summary, blocked.events)
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
    .begin(step: step, thread: 0, queueable: false), .store(step: step, node: 0, value: new),
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

  @Test func theCheckerHoldsAnIsolationsCallsToTheSerialOrderAcrossRoots() {
    // One thread sets `a`, `b`, then `a` again; each root has an anchor and a main-actor
    // observer (isolation 0). The main actor ran `a`'s two calls before `b`'s: a lane per
    // observable, not one mailbox.
    let nodes: [HistoryNode] = [.root(initial: 0), .root(initial: 0)]
    let observers = [
      HistoryObserver(node: 0, options: [.new]), HistoryObserver(node: 1, options: [.new]),
      HistoryObserver(node: 0, options: [.new], isolation: 0),
      HistoryObserver(node: 1, options: [.new], isolation: 0),
    ]
    func set(_ step: Int, root: Int, to value: Int) -> [HistoryEvent] {
      [
        .begin(step: step, thread: 0, queueable: false),
        .store(step: step, node: root, value: value),
        .publication(observer: root, option: .new, value: value, thread: 1),
        .end(step: step),
      ]
    }
    let sets = set(1, root: 0, to: 1) + set(2, root: 1, to: 2) + set(3, root: 0, to: 3)
    func mainActor(_ calls: [(observer: Int, value: Int)]) -> [HistoryEvent] {
      calls.map { .publication(observer: $0.observer, option: .new, value: $0.value, thread: 9) }
    }
    let inOrder = sets + mainActor([(2, 1), (3, 2), (2, 3)])
    let perObservable = sets + mainActor([(2, 1), (2, 3), (3, 2)])
    let clean = PropagationHistory.check(nodes: nodes, observers: observers, events: inOrder)
    #expect(clean.isClean, "\(clean)")
    let report = PropagationHistory.check(
      nodes: nodes, observers: observers, events: perObservable)
    #expect(report.ordering == 1, "\(report)")
    #expect(report.lost == 0 && report.outOfOrder == 0, "each observer alone is fine: \(report)")
  }

  @Test func theCheckerReportsAnOrderingCycleAndAnOrderAgainstRealTime() {
    // Two transactions over `a` and `b`: `a`'s observer saw P before Q, `b`'s Q before P.
    let nodes: [HistoryNode] = [.root(initial: 0), .root(initial: 0)]
    let observers = [
      HistoryObserver(node: 0, options: [.new]), HistoryObserver(node: 1, options: [.new]),
    ]
    let cycle: [HistoryEvent] = [
      .begin(step: 1, thread: 0, queueable: false), .store(step: 1, node: 0, value: 1),
      .store(step: 1, node: 1, value: 1),
      .begin(step: 2, thread: 1, queueable: false), .store(step: 2, node: 0, value: 2),
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
      .begin(step: 1, thread: 0, queueable: false), .store(step: 1, node: 0, value: 1),
      .end(step: 1),
      .begin(step: 2, thread: 1, queueable: false), .store(step: 2, node: 0, value: 2),
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

  @Test func theCheckerPlacesARegistrationAmongThePropagationsOfItsOwnNodesRootsOnly() {
    // `a`, `b` and `a.map { $0 * 10 }`. Propagation 1 sets `a` and is still delivering when a
    // registration on the map is made; propagation 2, of `b` alone, ended before it. Serial
    // orders may place 2 before 1, so the map's `.new(10)` after the registration is its due.
    let nodes: [HistoryNode] = [.root(initial: 0), .root(initial: 0), .map(0, { $0 * 10 })]
    let observers = [
      HistoryObserver(node: 0, options: [.new]), HistoryObserver(node: 1, options: [.new]),
      HistoryObserver(node: 2, options: [.new]),
    ]
    func history(endingFirstBeforeTheRegistration: Bool) -> [HistoryEvent] {
      let first: [HistoryEvent] = [
        .begin(step: 1, thread: 0, queueable: false), .store(step: 1, node: 0, value: 1),
        .publication(observer: 0, option: .new, value: 1, thread: 1),
      ]
      let second: [HistoryEvent] = [
        .begin(step: 2, thread: 1, queueable: false), .store(step: 2, node: 1, value: 2),
        .publication(observer: 1, option: .new, value: 2, thread: 2), .end(step: 2),
      ]
      let registration: [HistoryEvent] = [.registering(observer: 2), .registered(observer: 2)]
      let delivery: [HistoryEvent] = [.publication(observer: 2, option: .new, value: 10, thread: 1)]
      return endingFirstBeforeTheRegistration
        ? first + second + [.end(step: 1)] + registration + delivery
        : first + second + registration + delivery + [.end(step: 1)]
    }
    let overlapping = PropagationHistory.check(
      nodes: nodes, observers: observers,
      events: history(endingFirstBeforeTheRegistration: false))
    #expect(overlapping.isClean, "\(overlapping)")
    // Had propagation 1 ended before the registering call began, its change was not due.
    let ended = PropagationHistory.check(
      nodes: nodes, observers: observers, events: history(endingFirstBeforeTheRegistration: true))
    #expect(!ended.isClean, "\(ended)")
  }

  @Test func theCheckerOrdersAPropagationThatRanInsideASwitchBeforeIt() {
    // `a`, `b` and `a.flatMapLatest { [a, b][$0 % 2] }`. Propagation 1 sets `a = 1`, so the
    // switch selects `b`; it waits for `b`'s graph, where propagation 2 sets `b = 2`, and then
    // publishes 2. Propagation 1 appeared first in the roots, but took effect last.
    let nodes: [HistoryNode] = [
      .root(initial: 0), .root(initial: 0),
      .switchTo(selector: 0, candidates: [0, 1], select: { abs($0 % 2) }),
    ]
    let observers = [
      HistoryObserver(node: 0, options: [.new]), HistoryObserver(node: 1, options: [.new]),
      HistoryObserver(node: 2, options: [.new]),
    ]
    func history(switchPublishes value: Int) -> [HistoryEvent] {
      [
        .begin(step: 1, thread: 0, queueable: false), .store(step: 1, node: 0, value: 1),
        .publication(observer: 0, option: .new, value: 1, thread: 1),
        .begin(step: 2, thread: 1, queueable: false), .store(step: 2, node: 1, value: 2),
        .publication(observer: 1, option: .new, value: 2, thread: 2), .end(step: 2),
        .publication(observer: 2, option: .new, value: value, thread: 1), .end(step: 1),
      ]
    }
    let switched = PropagationHistory.check(
      nodes: nodes, observers: observers, events: history(switchPublishes: 2))
    #expect(switched.isClean, "\(switched)")
    // Whichever order: a switch that published `b`'s value from before propagation 2, and
    // nothing after it, lost a change.
    let stale = PropagationHistory.check(
      nodes: nodes, observers: observers, events: history(switchPublishes: 0))
    #expect(!stale.isClean, "\(stale)")
    // A set inside a callback belongs to the propagation that called it, which switches after
    // the set returned: the switch may still take effect after propagation 2. A plain set that
    // returned before propagation 2 began may not.
    func nested(queueable: Bool) -> [HistoryEvent] {
      [
        .begin(step: 1, thread: -1, queueable: queueable), .store(step: 1, node: 0, value: 1),
        .publication(observer: 0, option: .new, value: 1, thread: 1), .end(step: 1),
        .begin(step: 2, thread: 1, queueable: false), .store(step: 2, node: 1, value: 2),
        .publication(observer: 1, option: .new, value: 2, thread: 2), .end(step: 2),
        .publication(observer: 2, option: .new, value: 2, thread: 1),
      ]
    }
    let inCallback = PropagationHistory.check(
      nodes: nodes, observers: observers, events: nested(queueable: true))
    #expect(inCallback.isClean, "\(inCallback)")
    let returned = PropagationHistory.check(
      nodes: nodes, observers: observers, events: nested(queueable: false))
    #expect(!returned.isClean, "\(returned)")
    // A registration on the switch made while propagation 1 still ran, after six propagations of
    // `b` that ended before it (the switch reads `b` too): propagation 1, which took effect after
    // them, is due to it, though it appeared first in the roots, six places earlier.
    let seconds = (2...7).flatMap { step -> [HistoryEvent] in
      [
        .begin(step: step, thread: 1, queueable: false), .store(step: step, node: 1, value: step),
        .publication(observer: 1, option: .new, value: step, thread: 2), .end(step: step),
      ]
    }
    let late: [HistoryEvent] =
      [
        .begin(step: 1, thread: 0, queueable: false), .store(step: 1, node: 0, value: 20),
        .publication(observer: 0, option: .new, value: 20, thread: 1),
      ] + seconds
      + [
        .registering(observer: 3), .registered(observer: 3),
        .publication(observer: 2, option: .new, value: 20, thread: 1),
        .publication(observer: 3, option: .new, value: 20, thread: 1), .end(step: 1),
      ]
    let registered = PropagationHistory.check(
      nodes: nodes, observers: observers + [HistoryObserver(node: 2, options: [.new])],
      events: late)
    #expect(registered.isClean, "\(registered)")
  }

  // MARK: The threaded model test

  /// The checker's control: on one thread, every engine runs propagations one at a time, so any
  /// violation found here is the checker's (or the model's) mistake.
  @Test func randomGraphsSetFromOneThreadPassTheChecker() async {
    for seed in UInt64(1)...12 {
      let (report, summary, _) = await onItsOwnThread {
        runRandomGraph(seed: seed, threads: 1, steps: 300)
      }
      #expect(report.isClean, "seed \(seed), one thread, graph \(summary):\n\(report)")
    }
  }

  /// The control with several threads: their steps take turns under one lock, so every engine
  /// runs one propagation at a time (the reactions' sets, inside callbacks, run under the lock of
  /// the step that caused them); the logs still come from several threads, registrations too.
  @Test func randomGraphsSetFromSeveralThreadsTakingTurnsPassTheChecker() async {
    for seed in UInt64(1)...6 {
      let (report, summary, _) = await onItsOwnThread {
        runRandomGraph(seed: seed, threads: 3, steps: 150, oneAtATime: NSLock())
      }
      #expect(report.isClean, "seed \(seed), 3 threads taking turns, graph \(summary):\n\(report)")
    }
  }

  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func randomGraphsSetFromSeveralThreadsPublishOneSerialOrder(seed: UInt64) async {
    let threads = 2 + Int(seed % 3)
    let (report, summary, _) = await onItsOwnThread {
      runRandomGraph(seed: seed, threads: threads, steps: 150)
    }
    let description = "seed \(seed), \(threads) threads, graph \(summary):\n\(report)"
    #expect(report.isClean, "\(description)")
  }

  /// The same, with a callback that blocks, three times a run, until another thread's set of its
  /// graph has returned: that set is queued whole and returns (no deadlock), and the history is
  /// still one serial order of whole propagations.
  @Test(arguments: [UInt64(7), 8])
  func randomGraphsWithACallbackBlockingOnAnotherThreadPublishOneSerialOrder(
    seed: UInt64
  ) async {
    let (report, summary, blocked) = await onItsOwnThread {
      runRandomGraph(seed: seed, threads: 2, steps: 150, blocking: true)
    }
    #expect(!blocked.isEmpty && !blocked.contains(false), "seed \(seed): waits ended: \(blocked)")
    let description =
      "seed \(seed), 2 threads and a blocking callback, graph \(summary):\n\(report)"
    #expect(report.isClean, "\(description)")
  }
}

// MARK: - The issue's seven breaks, one test each

/// Waits for `semaphore` up to the test deadline; `false` if it timed out.
private func arrives(_ semaphore: DispatchSemaphore) -> Bool {
  semaphore.wait(timeout: .now() + testTimeout) == .success
}

extension SerializabilityTests {
  /// Item 1: thread T's transaction sets `x` and `y` while another thread sets both; the other
  /// thread's sets wait for the transaction's end, so no observer sees `(1, 0)`-like halves,
  /// an `.old` that is not the previous value, or `(0, 2)`.
  @Test func transactionIsNotOverlappedByAnotherThreadsSet() async {
    let report = await onItsOwnThread { () -> HistoryReport in
      let history = PropagationHistory(nodes: [
        .root(initial: 0), .root(initial: 0), .combine([0, 1], mix),
      ])
      let (x, y) = (Observable(0), Observable(0))
      let tokens = [
        record(x, node: 0, options: [.old, .new], in: history),
        record(y, node: 1, options: [.old, .new], in: history),
        record(
          x.combineLatest(y), node: 2, options: [.new], in: history,
          encode: { mix([$0.0, $0.1]) }),
      ]
      for round in 0..<20 {
        let inside = DispatchSemaphore(value: 0)
        let other = runInBackground {
          guard arrives(inside) else { return }
          set(x, node: 0, to: 2_000_000 + 2 * round, thread: 1, in: history)
          set(y, node: 1, to: 2_000_001 + 2 * round, thread: 1, in: history)
        }
        let stores = [
          (node: 0, value: 1_000_000 + 2 * round), (node: 1, value: 1_000_001 + 2 * round),
        ]
        history.propagation(thread: 0, stores: stores) {
          withObservationTransaction {
            x.value = stores[0].value
            inside.signal()
            // Room for the other thread's sets to overlap, if the engine let them; the check does
            // not depend on it.
            usleep(2_000)
            y.value = stores[1].value
          }
        }
        other.waitUntilFinished("the other thread's sets")
      }
      withExtendedLifetime(tokens) {}
      return history.check()
    }
    #expect(report.isClean, "\(report)")
  }

  /// Item 2: `e.combineLatest(d.combineLatest(a))`, `a` and `d` set from two threads: both the
  /// inner and the outer combination publish every change, each a state that existed.
  @Test func nestedCombineLatestPublishesEveryChange() async {
    let report = await onItsOwnThread { () -> HistoryReport in
      let history = PropagationHistory(nodes: [
        .root(initial: 0), .root(initial: 0), .root(initial: 0), .combine([1, 2], mix),
        .combine([0, 1, 2], mix),
      ])
      let (e, d, a) = (Observable(0), Observable(0), Observable(0))
      let inner = d.combineLatest(a)
      let outer = e.combineLatest(inner)
      let tokens = [
        record(e, node: 0, options: [.new], in: history),
        record(d, node: 1, options: [.new], in: history),
        record(a, node: 2, options: [.new], in: history),
        record(inner, node: 3, options: [.new], in: history, encode: { mix([$0.0, $0.1]) }),
        record(
          outer, node: 4, options: [.old, .new], in: history,
          encode: { mix([$0.0, $0.1.0, $0.1.1]) }),
      ]
      let roots = [d, a]
      runConcurrently(2) { thread in
        for sequence in 1...2_000 {
          set(
            roots[thread], node: thread + 1, to: (thread + 1) * 1_000_000 + sequence,
            thread: thread, in: history)
        }
      }
      withExtendedLifetime(tokens) {}
      return history.check()
    }
    #expect(report.isClean, "\(report)")
    #expect(report.propagations == 4_000)
  }

  /// Item 3: `m = a.map { $0 * 10 }`, `c = a.combineLatest(m)`. A thread holds the graph while a
  /// callback of its registration on `m` (its `.initial`, or its `.new` for the thread's own set
  /// of `a`) waits for another thread's `a = 2` to return. That set cannot wait (its waiting
  /// would never end): it is queued whole, returns, and runs after the holder's propagation;
  /// `c` never publishes `(2, 10)` or `(2, 50)`.
  @Test(arguments: [true, false])
  func aGiveUpNeverSplitsADiamond(holdingInInitial: Bool) async {
    let (report, waited) = await onItsOwnThread { () -> (HistoryReport, Bool) in
      let history = PropagationHistory(nodes: [
        .root(initial: 1), .map(0, { $0 * 10 }), .combine([0, 1], mix),
      ])
      let a = Observable(1)
      let m = a.map { $0 * 10 }
      let tokens = [
        record(a, node: 0, options: [.old, .new], in: history),
        record(
          a.combineLatest(m), node: 2, options: [.new], in: history,
          encode: { mix([$0.0, $0.1]) }),
      ]
      let holding = DispatchSemaphore(value: 0)
      let setReturned = DispatchSemaphore(value: 0)
      let waited = RecordingLog<Bool>()
      let kept = TokenJar()
      // The holder: the registration's `.initial` call, or its `.new` call for the same thread's
      // set of `a = 5`.
      let registrant = runInBackground {
        kept.append(
          record(m, node: 1, options: [.initial, .new], in: history) { option, value in
            guard holdingInInitial ? option == .initial : (option == .new && value == 50) else {
              return
            }
            holding.signal()
            waited.append(arrives(setReturned))
          })
        if !holdingInInitial { set(a, node: 0, to: 5, thread: 0, in: history) }
      }
      let setter = runInBackground {
        guard arrives(holding) else { return }
        set(a, node: 0, to: 2, thread: 1, queueable: true, in: history)
        setReturned.signal()
      }
      setter.waitUntilFinished("a = 2 while a registration's .initial waits for it")
      registrant.waitUntilFinished("the registration on a.map")
      set(a, node: 0, to: 3, thread: 2, in: history)
      withExtendedLifetime((tokens, kept)) {}
      return (history.check(), waited.events == [true])
    }
    #expect(waited, "the .initial call waited for the set's return in vain")
    #expect(report.isClean, "\(report)")
  }

  /// Item 4: thread D's propagation of `x` is held by a callback waiting for another thread's
  /// `withObservationTransaction { x = 10; y = 10 }` to return. The transaction is queued whole,
  /// never split: `x.combineLatest(y)` publishes `(1, 0)` then `(10, 10)`, never `(0, 10)` or
  /// `(1, 10)`.
  @Test func aTransactionEndingBehindABlockedCallbackIsNeverSplit() async {
    let (report, waited) = await onItsOwnThread { () -> (HistoryReport, Bool) in
      let history = PropagationHistory(nodes: [
        .root(initial: 0), .root(initial: 0), .combine([0, 1], mix),
      ])
      let (x, y) = (Observable(0), Observable(0))
      let holding = DispatchSemaphore(value: 0)
      let transactionReturned = DispatchSemaphore(value: 0)
      let waited = RecordingLog<Bool>()
      let tokens = [
        record(x, node: 0, options: [.old, .new], in: history) { option, value in
          guard option == .new, value == 1 else { return }
          holding.signal()
          waited.append(arrives(transactionReturned))
        },
        record(y, node: 1, options: [.old, .new], in: history),
        record(
          x.combineLatest(y), node: 2, options: [.new], in: history,
          encode: { mix([$0.0, $0.1]) }),
      ]
      let holder = runInBackground { set(x, node: 0, to: 1, thread: 0, in: history) }
      let transaction = runInBackground {
        guard arrives(holding) else { return }
        history.propagation(thread: 1, queueable: true, stores: [(0, 10), (1, 10)]) {
          withObservationTransaction {
            x.value = 10
            y.value = 10
          }
        }
        transactionReturned.signal()
      }
      transaction.waitUntilFinished("the transaction behind the blocked callback")
      holder.waitUntilFinished("the set of x whose callback waited")
      set(y, node: 1, to: 20, thread: 2, in: history)
      withExtendedLifetime(tokens) {}
      return (history.check(), waited.events == [true])
    }
    #expect(waited, "the callback waited for the transaction's return in vain")
    #expect(report.isClean, "\(report)")
  }

  /// Item 5: `c = a.combineLatest(b)`, with a slow (not blocked) observer of `a` registered before
  /// `c`. D sets `a = 1`; while its observer runs, S sets `b = 1`. S's set waits for D's
  /// propagation, then runs its own: when it returns, `c` has published `(1, 1)`, after `(1, 0)`,
  /// and never `(0, 1)`.
  @Test func aSetterFindingItsGraphBusyWaitsAndPublishesInOrder() async {
    let rounds = await onItsOwnThread { () -> [(report: HistoryReport, seen: Bool)] in
      var rounds: [(report: HistoryReport, seen: Bool)] = []
      for _ in 0..<5 {
        let history = PropagationHistory(nodes: [
          .root(initial: 0), .root(initial: 0), .combine([0, 1], mix),
        ])
        let (a, b) = (Observable(0), Observable(0))
        let inside = DispatchSemaphore(value: 0)
        let published = RecordingLog<Int>()
        let tokens = [
          a.observe { _, _ in
            inside.signal()
            usleep(30_000)  // slow, well under the 100 ms after which a holder counts as stuck
          },
          record(a, node: 0, options: [.old, .new], in: history),
          record(b, node: 1, options: [.old, .new], in: history),
          record(
            a.combineLatest(b), node: 2, options: [.new], in: history,
            encode: { mix([$0.0, $0.1]) }, reaction: { _, value in published.append(value) }),
        ]
        let holder = runInBackground { set(a, node: 0, to: 1, thread: 0, in: history) }
        guard arrives(inside) else { break }
        set(b, node: 1, to: 2, thread: 1, in: history)
        let seen = published.events == [mix([1, 0]), mix([1, 2])]
        holder.waitUntilFinished("the set of a with a slow observer")
        withExtendedLifetime(tokens) {}
        rounds.append((history.check(), seen))
      }
      return rounds
    }
    #expect(rounds.count == 5)
    for (round, result) in rounds.enumerated() {
      #expect(
        result.seen, "round \(round): c had not published (1, 0) then (1, 2) when b = 2 returned")
      #expect(result.report.isClean, "round \(round): \(result.report)")
    }
  }

  /// Item 6: thread B sets `y` in a loop, and `y`'s callback sets `x`. A plain setter of `x`
  /// waits its turn among them (first come, first served) and returns after its own change: a
  /// bounded number of B's changes of `x` are published between its set's start and its return,
  /// not the whole flood (which, before, it delivered itself until B stopped).
  @Test func settersInsideCallbacksCannotStarveAPlainSetter() async {
    // Five times: how much of the flood a plain set meets depends on the interleaving.
    for attempt in 0..<5 {
      await settersInsideCallbacksCannotStarveAPlainSetter(attempt: attempt)
    }
  }

  private func settersInsideCallbacksCannotStarveAPlainSetter(attempt: Int) async {
    let (overtaken, returned) = await onItsOwnThread { () -> ([Int?], Bool) in
      let (x, y) = (Observable(0), Observable(0))
      let log = RecordingLog<Int>()
      // The plain setter's `i`-th set: a marker before it, its value, a marker after it returned.
      @Sendable func begins(_ set: Int) -> Int { Int.min + set }
      @Sendable func plainValue(_ set: Int) -> Int { 999_000_000 + set }
      @Sendable func returns(_ set: Int) -> Int { Int.max - set }
      let plainSets = 200
      let flooding = DispatchSemaphore(value: 0)
      let done = RecordingLog<Bool>()
      let nested = LockedValue(0)
      let tokens = [
        x.observe { value, _ in log.append(value) },
        y.observe { value, _ in
          x.value = -nested.withLock { count in  // only B's thread delivers y
            count += 1
            return count
          }
        },
      ]
      let flood = runInBackground {
        for value in 1...50_000 {
          y.value = value
          if value == 200 { flooding.signal() }
          if !done.events.isEmpty { break }
        }
      }
      let plain = runInBackground {
        guard arrives(flooding) else { return }
        for set in 0..<plainSets {
          log.append(begins(set))
          x.value = plainValue(set)
          log.append(returns(set))
        }
        done.append(true)
      }
      let returned = plain.waitUntilFinished("the plain setter of x")
      flood.waitUntilFinished("the flood of sets inside callbacks")
      withExtendedLifetime(tokens) {}
      let events = log.events
      let overtaken = (0..<plainSets).map { set -> Int? in
        guard let begin = events.firstIndex(of: begins(set)),
          let end = events.firstIndex(of: returns(set)),
          events[begin..<end].contains(plainValue(set))
        else { return nil }
        // B's changes published while the plain set was under way (its own excluded).
        return end - begin - 2
      }
      return (overtaken, returned)
    }
    #expect(returned)
    #expect(
      !overtaken.contains(nil),
      "attempt \(attempt): a plain set's change was not published before it returned: \(overtaken)")
    // FIFO: once the plain set waits for the turn, at most the propagation running then goes
    // first. Between logging its marker and starting to wait, the plain setter's thread can be
    // descheduled while B goes on (two cores, other tests beside it), so a few sets meet more:
    // the median is what FIFO bounds; the issue saw 86 000 and more for every set.
    let counts = overtaken.compactMap { $0 }.sorted()
    let median = counts.isEmpty ? 0 : counts[counts.count / 2]
    #expect(
      median <= 10,
      "attempt \(attempt): a median of \(median) of B's changes went before a plain set (most: \(counts.last ?? 0))"
    )
  }

  /// Item 7: thread A delivers `x` inside `z`'s callback, and inside `x`'s callback sets `x = 3`;
  /// meanwhile thread B sets `x = 2` inside `y`'s callback. B's change is a propagation of its own,
  /// never folded into A's: `x.combineLatest(k)` publishes `(2, 0)` once, `x`'s `.old` chain holds,
  /// and the last pair is `x`'s final value.
  @Test func aDelivererInsideACallbackNeverFoldsAnotherThreadsChange() async {
    let problems = await onItsOwnThread { () -> [String] in
      var problems: [String] = []
      for round in 0..<10 {
        let (x, y, z, k) = (Observable(0), Observable(0), Observable(0), Observable(0))
        let xLog = RecordingLog<(HistoryOption, Int)>()
        let pairs = RecordingLog<Int>()
        let aInside = DispatchSemaphore(value: 0)
        let bBegins = DispatchSemaphore(value: 0)
        let tokens = [
          x.observe(options: [.old, .new]) { value, option in
            xLog.append((historyOption(option), value))
            guard option == .new, value == 1 else { return }
            aInside.signal()
            guard arrives(bBegins) else { return }
            usleep(2_000)  // room for B's set to arrive while A holds x; the checks do not need it
            x.value = 3
          },
          x.combineLatest(k).observe { pair, _ in pairs.append(pair.0) },
          z.observe { _, _ in x.value = 1 },
          y.observe { _, _ in
            bBegins.signal()
            x.value = 2
          },
        ]
        let threadA = runInBackground { z.value = 1 }
        let threadB = runInBackground {
          guard arrives(aInside) else { return }
          y.value = 1
        }
        threadA.waitUntilFinished("thread A")
        threadB.waitUntilFinished("thread B")
        let final = x.value
        let published = pairs.events
        if published.filter({ $0 == 2 }).count != 1 {
          problems.append(
            "round \(round): (2, 0) published \(published.filter { $0 == 2 }.count) times in \(published)"
          )
        }
        if published.last != final {
          problems.append(
            "round \(round): the last pair has x = \(published.last ?? 0), x is \(final)")
        }
        var last = 0
        for (option, value) in xLog.events {
          if option == .old && value != last {
            problems.append(
              "round \(round): x's .old(\(value)) after \(last): \(xLog.events.map(\.1))")
            break
          }
          if option == .new { last = value }
        }
        withExtendedLifetime(tokens) {}
      }
      return problems
    }
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }
}

// MARK: - Lost updates, and the nested case the articles used to exempt

/// The stress harness's accounting: a set is due to every registration of its observable whose
/// registering call returned before the set began and which was still registered (no cancel,
/// removal or owner release begun) after the set returned, unless the set may have been queued.
private final class DeliveryAccounting: @unchecked Sendable {
  private struct SetRecord {
    let observable: Int
    let value: Int
    let begin: Int
    let end: Int
    /// The set took the turn timeout or longer (see `mayQueue(_:)`).
    let mayHaveBeenQueued: Bool
  }

  private struct Registration {
    let observable: Int
    var registered: Int?
    var ending: Int?
    var received: Set<Int> = []
  }

  private let lock = NSLock()
  // Guarded by `lock`: a logical clock, the top-level sets and the registrations.
  private var clock = 0
  private var sets: [SetRecord] = []
  private var registrations: [Registration] = []

  /// The next tick of the clock.
  func tick() -> Int {
    lock.withLock {
      clock += 1
      return clock
    }
  }

  func newRegistration(observable: Int) -> Int {
    lock.withLock {
      registrations.append(Registration(observable: observable))
      return registrations.count - 1
    }
  }

  func registered(_ registration: Int) {
    lock.withLock {
      clock += 1
      registrations[registration].registered = clock
    }
  }

  /// Ends are logged before the call that ends them.
  func ending(_ ended: [Int]) {
    lock.withLock {
      clock += 1
      for registration in ended where registrations[registration].ending == nil {
        registrations[registration].ending = clock
      }
    }
  }

  func received(_ registration: Int, _ value: Int) {
    lock.withLock { _ = registrations[registration].received.insert(value) }
  }

  func set(observable: Int, value: Int, begin: Int, end: Int, mayHaveBeenQueued: Bool) {
    lock.withLock {
      sets.append(
        SetRecord(
          observable: observable, value: value, begin: begin, end: end,
          mayHaveBeenQueued: mayHaveBeenQueued))
    }
  }

  /// The deliveries due and never made, with the first few described. A set that may have been
  /// queued is due to no registration: when it takes effect is not known.
  func lost() -> (count: Int, due: Int, examples: [String]) {
    lock.withLock {
      var count = 0
      var due = 0
      var examples: [String] = []
      for set in sets where !set.mayHaveBeenQueued {
        for (id, registration) in registrations.enumerated()
        where registration.observable == set.observable
          && (registration.registered ?? .max) < set.begin
          && (registration.ending ?? .max) > set.end
        {
          due += 1
          guard !registration.received.contains(set.value) else { continue }
          count += 1
          if examples.count < 5 {
            examples.append(
              "registration \(id) on observable \(set.observable) never got \(set.value)")
          }
        }
      }
      return (count, due, examples)
    }
  }
}

private let stressOptions: [ObservableOptions] = [
  [.new], [.old, .new], [.initial, .new], [.initial, .old, .new],
]

/// One stress thread: sets, token and owner registrations (some reacting with a set of another
/// observable or a registration), cancels, removals and owners dying, on four observables.
private func runStressScript(
  _ observables: [Observable<Int>], thread: Int, steps: Int, accounting: DeliveryAccounting
) {
  var random = SplitMix64(seed: 0x5EED &+ UInt64(thread))
  func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }
  var tokens: [(registration: Int, token: ObservationToken)] = []
  // Two owners, and their registrations per observable.
  var owners = [Owner(), Owner()]
  var ownerRegistrations: [[[Int]]] = Array(repeating: Array(repeating: [], count: 4), count: 2)
  var sequence = 0
  func callback(
    _ registration: Int, observable: Int, reaction: Int
  ) -> @Sendable (Int, ObservableOptions) -> Void {
    { value, option in
      guard option == .new else { return }
      accounting.received(registration, value)
      guard value > 0 else { return }
      if reaction == 1 && value % 3 == 0 {
        observables[(observable + 1) % 4].value = -value
      } else if reaction == 2 && value % 5 == 0 {
        // A re-entrant registration, ended at once (kept, the registrations would pile up).
        observables[observable].observe(options: [.initial, .new]) { _, _ in }.cancel()
      }
    }
  }
  func setValue(_ observable: Int) {
    sequence += 1
    let value = (thread + 1) * 1_000_000 + sequence
    let begin = accounting.tick()
    let mayHaveBeenQueued = mayQueue { observables[observable].value = value }
    accounting.set(
      observable: observable, value: value, begin: begin, end: accounting.tick(),
      mayHaveBeenQueued: mayHaveBeenQueued)
  }
  for _ in 0..<steps {
    let observable = pick(4)
    switch pick(100) {
    case 0..<15 where tokens.count < 8:
      let registration = accounting.newRegistration(observable: observable)
      let options = stressOptions[pick(stressOptions.count)]
      let token = observables[observable].observe(
        options: options, callback(registration, observable: observable, reaction: pick(4)))
      accounting.registered(registration)
      tokens.append((registration, token))
    case 0..<25:
      // A cancel (also in place of a registration, past eight tokens, so that each set reaches
      // a bounded number of registrations).
      guard !tokens.isEmpty else { continue }
      let (registration, token) = tokens.remove(at: pick(tokens.count))
      accounting.ending([registration])
      token.cancel()
    case 25..<35 where ownerRegistrations[0][observable].count < 3:
      let slot = pick(2)
      let registration = accounting.newRegistration(observable: observable)
      observables[observable].addObserver(
        owners[slot], removeIfExists: false, options: stressOptions[pick(stressOptions.count)],
        closure: callback(registration, observable: observable, reaction: pick(4)))
      accounting.registered(registration)
      ownerRegistrations[slot][observable].append(registration)
    case 25..<40:
      let slot = pick(2)
      accounting.ending(ownerRegistrations[slot][observable])
      observables[observable].removeObserver(owners[slot])
      ownerRegistrations[slot][observable] = []
    case 40..<45:
      // The owner dies here, or on a thread delivering to it.
      let slot = pick(2)
      accounting.ending(ownerRegistrations[slot].flatMap { $0 })
      owners[slot] = Owner()
      ownerRegistrations[slot] = Array(repeating: [], count: 4)
    case 45..<55:
      // The shape of every loss the issue saw: a fresh registration, then a set by the same
      // thread, which the registration must hear of.
      let registration = accounting.newRegistration(observable: observable)
      let token = observables[observable].observe(
        options: stressOptions[pick(stressOptions.count)],
        callback(registration, observable: observable, reaction: 0))
      accounting.registered(registration)
      setValue(observable)
      accounting.ending([registration])
      token.cancel()
    default:
      setValue(observable)
    }
  }
  for (registration, token) in tokens {
    accounting.ending([registration])
    token.cancel()
  }
  for slot in 0..<2 { accounting.ending(ownerRegistrations[slot].flatMap { $0 }) }
}

extension SerializabilityTests {
  /// The stress harness of the issue, smaller: eight threads of mixed work on four observables.
  /// A registration whose call returned before a set began, and still registered after that set
  /// returned, was called for it.
  @Test func eightThreadsOfMixedWorkLoseNoUpdate() async {
    let (lost, due, examples) = await onItsOwnThread { () -> (Int, Int, [String]) in
      let observables = (0..<4).map { _ in Observable(0) }
      let accounting = DeliveryAccounting()
      // About 1 000 steps a thread run in a few seconds; the issue's losses came about once in
      // 20 000 operations, so SERIALIZABILITY_STRESS_STEPS=3000 and more finds them more often.
      let steps =
        ProcessInfo.processInfo.environment["SERIALIZABILITY_STRESS_STEPS"].flatMap { Int($0) }
        ?? 1_000
      runConcurrently(8) { thread in
        runStressScript(observables, thread: thread, steps: steps, accounting: accounting)
      }
      return accounting.lost()
    }
    #expect(due > 0)
    #expect(lost == 0, "\(lost) of \(due) due deliveries lost: \(examples.joined(separator: "; "))")
  }

  /// `a.map { … }.combineLatest(d.map { … }.combineLatest(a))`, set from two threads: the case the
  /// articles used to document as not covered. Every combination published existed, once per
  /// change.
  @Test func aNestedCombinationOverTwoPathsOfOneSourcePublishesOnlyStatesThatExisted() async {
    let report = await onItsOwnThread { () -> HistoryReport in
      let history = PropagationHistory(nodes: [
        .root(initial: 0), .root(initial: 0),
        .combine([0, 1], { mix([$0[0] * 10, $0[1] * 10, $0[0]]) }),
      ])
      let (a, d) = (Observable(0), Observable(0))
      let combined = a.map { $0 * 10 }.combineLatest(d.map { $0 * 10 }.combineLatest(a))
      let tokens = [
        record(a, node: 0, options: [.new], in: history),
        record(d, node: 1, options: [.new], in: history),
        record(
          combined, node: 2, options: [.old, .new], in: history,
          encode: { mix([$0.0, $0.1.0, $0.1.1]) }),
      ]
      let roots = [a, d]
      runConcurrently(2) { thread in
        var random = SplitMix64(seed: UInt64(thread) + 40)
        for sequence in 1...2_000 {
          let root = Int.random(in: 0..<2, using: &random)
          set(
            roots[root], node: root, to: (thread + 1) * 1_000_000 + sequence, thread: thread,
            in: history)
        }
      }
      withExtendedLifetime(tokens) {}
      return history.check()
    }
    #expect(report.isClean, "\(report)")
  }
}

// MARK: - A registration that cannot wait for a transaction's turn

/// A transaction stores `y` and then `x`; its end runs `y`'s round first, whose callback blocks,
/// so `x` holds the transaction's value while its round has not run. Meanwhile this thread
/// registers on `x` with `options`, which cannot wait for the turn. Returns what the
/// registration got, as "option value", once the transaction has ended.
private func registerWhileATransactionIsStuck(options: ObservableOptions) -> [String] {
  let (x, y) = (Observable(0), Observable(0))
  let round = Gate("y's round at the transaction's end")
  let blocker = y.observe { value, _ in
    if value == 1 { round.block() }
  }
  let log = RecordingLog<String>()
  let token = round.runOnAnotherThread {
    withObservationTransaction {
      y.value = 1
      x.value = 1
    }
  } whileBlocked: {
    x.observe(options: options) { value, option in
      log.append("\(option == .initial ? "initial" : option == .old ? "old" : "new") \(value)")
    }
  }
  withExtendedLifetime((blocker, token)) {}
  return log.events
}

extension SerializabilityTests {
  /// The registration comes before the transaction: it sees the value from before it and then
  /// the transaction's change, once, never `.initial` with the transaction's value followed by
  /// the change to that same value.
  @Test func registrationThatCannotWaitForATransactionComesBeforeIt() async {
    let log = await onItsOwnThread {
      registerWhileATransactionIsStuck(options: [.initial, .old, .new])
    }
    #expect(log == ["initial 0", "old 0", "new 1"])
  }

  /// `.initial` alone, which keeps no registration, reads the value from before the transaction
  /// too, never one that the transaction may still change or undo.
  @Test func initialAloneWhileATransactionCannotBeWaitedForReadsTheValueBeforeIt() async {
    let log = await onItsOwnThread { registerWhileATransactionIsStuck(options: [.initial]) }
    #expect(log == ["initial 0"])
  }
}

// MARK: - A queued transaction beside a queued propagation

extension SerializabilityTests {
  /// Thread X's transaction sets `a = 10` and, while it holds `a`'s turn, thread Z2's callback
  /// sets `a = 20` in a transaction of its own: it cannot wait for X, which makes no progress,
  /// so it is queued behind X. X then sets `b = 11`, whose turn thread Z3 holds in a blocked
  /// callback: X cannot wait either, so its transaction is queued behind Z3. Giving `a`'s turn
  /// back at X's end runs Z2's transaction on X: it stays a propagation of its own, published at
  /// once, and X's follows, whole, once Z3 goes on: `a` publishes 20, then 10, never 20 alone as
  /// if the two transactions were one.
  @Test func aQueuedTransactionNeverTakesInTheSetsOfAnotherThreadsQueuedOne() async {
    let (report, published, waited) = await onItsOwnThread {
      () -> (HistoryReport, [Int], [Bool]) in
      let history = PropagationHistory(nodes: [
        .root(initial: 0), .root(initial: 0), .root(initial: 0),
      ])
      let (a, b, c) = (Observable(0), Observable(0), Observable(0))
      let (bHeld, releaseB) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
      let (aHeld, z2Returned) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
      let published = RecordingLog<Int>()
      let waited = RecordingLog<Bool>()
      let tokens = [
        record(a, node: 0, options: [.old, .new], in: history) { option, value in
          if option == .new { published.append(value) }
        },
        record(b, node: 1, options: [.old, .new], in: history) { option, value in
          guard option == .new, value == 1 else { return }
          bHeld.signal()
          waited.append(arrives(releaseB))
        },
        record(c, node: 2, options: [.old, .new], in: history) { option, value in
          guard option == .new, value == 2 else { return }
          history.propagation(thread: -1, queueable: true, stores: [(0, 20)]) {
            withObservationTransaction { a.value = 20 }
          }
        },
      ]
      let z3 = runInBackground { set(b, node: 1, to: 1, thread: 2, in: history) }
      waited.append(arrives(bHeld))
      let z2 = runInBackground {
        guard arrives(aHeld) else { return }
        set(c, node: 2, to: 2, thread: 1, in: history)
        z2Returned.signal()
      }
      history.propagation(thread: 0, queueable: true, stores: [(0, 10), (1, 11)]) {
        withObservationTransaction {
          a.value = 10
          aHeld.signal()
          waited.append(arrives(z2Returned))
          b.value = 11
        }
      }
      z2.waitUntilFinished("the set of c whose callback's transaction was queued")
      releaseB.signal()
      z3.waitUntilFinished("the set of b whose callback blocked")
      withExtendedLifetime(tokens) {}
      return (history.check(), published.events, waited.events)
    }
    #expect(waited == [true, true, true], "a thread waited in vain")
    #expect(published == [20, 10])
    #expect(report.isClean, "\(report)")
  }
}

// MARK: - Hunting over many seeds, on request

/// What `PO_HUNT_SEEDS` asks for, if set: `FIRST-LAST`, inclusive.
private let huntSeedsRequest = ProcessInfo.processInfo.environment["PO_HUNT_SEEDS"]

/// The seeds of `request`, or `nil` when it is not `FIRST-LAST` with `FIRST <= LAST`.
private func huntSeeds(_ request: String) -> ClosedRange<UInt64>? {
  let bounds = request.split(separator: "-", omittingEmptySubsequences: false).map { UInt64($0) }
  guard bounds.count == 2, let first = bounds[0], let last = bounds[1], first <= last else {
    return nil
  }
  return first...last
}

/// The random-graph runs a hunt repeats over its seeds.
enum HuntConfiguration: CaseIterable, Sendable {
  case twoThreadsAndABlockingCallback, threeThreadsAndABlockingCallback, threeThreads, fourThreads
  case sixThreads, eightThreads

  fileprivate func run(seed: UInt64) -> (report: HistoryReport, summary: String) {
    let run =
      switch self {
      case .twoThreadsAndABlockingCallback:
        runRandomGraph(seed: seed, threads: 2, steps: 150, blocking: true)
      case .threeThreadsAndABlockingCallback:
        runRandomGraph(seed: seed, threads: 3, steps: 150, blocking: true)
      case .threeThreads: runRandomGraph(seed: seed, threads: 3, steps: 200)
      case .fourThreads: runRandomGraph(seed: seed, threads: 4, steps: 150)
      case .sixThreads: runRandomGraph(seed: seed, threads: 6, steps: 120)
      case .eightThreads: runRandomGraph(seed: seed, threads: 8, steps: 100)
      }
    return (run.report, run.summary)
  }
}

extension SerializabilityTests {
  /// The random-graph checks over far more seeds than a normal run affords, on request only:
  /// `PO_HUNT_SEEDS=5000-5499 swift test --filter huntsRandomGraphs` runs every configuration
  /// over those seeds (`PO_HUNT_REPEATS=N` runs each seed N times, since threads interleave
  /// differently each time), and fails with the report of every history that is not one serial
  /// order of whole propagations. A malformed `PO_HUNT_SEEDS` fails the test with the form it
  /// expects. `PO_HUNT_ONLY=fourThreads` (a case of ``HuntConfiguration``) runs that
  /// configuration alone.
  ///
  /// `PROPERTY_OBSERVATION_TURN_TIMEOUT_MS=2` makes a waiter give up after 2 ms without progress,
  /// so the paths of a setter that cannot wait (queued propagations, transactions made again,
  /// registrations catching up, joins that cannot wait) run all the time, most with six or eight
  /// threads and other work beside the run. A switch that joins a graph whose propagation is
  /// stuck overlaps it (the Threading article's one exception), so expect breaks there.
  ///
  /// Seed 5166 makes `flatMapLatest` switches cross two graphs in opposite directions while both
  /// propagations are under way, and a third thread take a graph between them, which only a
  /// switch that went first handing its graph over excludes (see `PropagationGraph.handOver`);
  /// the interleaving is rare, so hunt it with many repeats (`PO_HUNT_REPEATS=48`).
  @Test(.enabled(if: huntSeedsRequest != nil), arguments: HuntConfiguration.allCases)
  func huntsRandomGraphs(_ configuration: HuntConfiguration) async {
    guard let request = huntSeedsRequest, let seeds = huntSeeds(request) else {
      Issue.record("PO_HUNT_SEEDS must be FIRST-LAST, FIRST <= LAST, both whole numbers")
      return
    }
    let environment = ProcessInfo.processInfo.environment
    // Run alone, a configuration interleaves differently than beside the others.
    if let only = environment["PO_HUNT_ONLY"], only != "\(configuration)" { return }
    let repeats = max(1, Int(environment["PO_HUNT_REPEATS"] ?? "") ?? 1)
    for seed in seeds {
      for _ in 0..<repeats {
        let (report, summary) = await onItsOwnThread { configuration.run(seed: seed) }
        #expect(report.isClean, "seed \(seed), \(configuration), graph \(summary):\n\(report)")
      }
    }
  }
}
