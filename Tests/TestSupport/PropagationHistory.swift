import Foundation
import PropertyObservation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// The history checker of issue 40: a test records, in one locked append-only log, every
// propagation it starts (its thread and the stores it makes) and every publication its
// observers see; `check()` then asks whether those publications fit ONE serial order of whole
// propagations, by replaying the propagations, in the order they took effect, through a
// single-threaded reference model of the graph and comparing every observer's calls with the
// model's.
//
// How the order is found. Every store writes a value no other store writes, and every root has an
// observer with `.new`, so each root publication names the propagation that made it. The contract
// says a graph runs one propagation at a time: the propagations of a graph therefore reach the
// log one after another, and the order in which they first appear in the roots' publications
// is the order in which they took effect. (A propagation none of whose stores was ever published
// is placed where its set returned.) Graphs join, though: a `flatMapLatest` that switches joins
// the selected observable's graph in the middle of its propagation, after the propagations
// running there, which can appear in the roots after it. When the first order does not explain
// the history, the checker tries moving a propagation after ones that ended while it ran (a set
// made inside a callback: after any) and store none of its roots, and keeps the order that
// explains the most. It then verifies that this order is a serial order the contract allows:
//
// - every root's observers saw the propagations in that order (two roots that disagree are an
//   ordering cycle);
// - it respects real time and each thread's program order: a propagation whose set returned
//   before another's began comes first. A set made inside a callback may be queued (the
//   deadlock-avoidance rule) and return before it takes effect, so only its beginning counts
//   (the test marks such sets `queueable`); so does a top-level set that the library reports
//   it queued (see `mayQueue`).
//
// The replay. The model applies each propagation's last store per root, then recomputes every
// derived node once, in definition order, exactly as the node's kind says (`HistoryNode`); a node
// that changed publishes to each of its observers `.old` (its previous value) then `.new`. Each
// observer's `.new` calls (its `.old` calls for an observer without `.new`) are aligned with the
// model's, from the observer's registration point: an observer registered while propagations
// ran may start at any propagation that overlapped its registering call (counting only those
// that store a root the node reads: the others commute with its changes), and the checker takes
// the start that explains its calls best (for `.initial`, the one whose state is its `.initial`
// value). What does not align is a violation:
//
// - lost: a publication the model makes that the observer never got (a skipped input change, a
//   write that never reached a node, a change of a registration that returned before it began);
// - impossible: a value the node never held in the model (a split diamond, a transaction's
//   in-between value, part of one propagation beside an older value);
// - duplicate: the value the observer just got, again;
// - out of order: a value the node held, but not at that point (a reordered or stale value);
// - broken `.old` chain: an `.old` that is not the observer's previous value, or a `.new` not
//   preceded by its `.old`;
// - ordering: the order violations listed above, and calls that ran in one isolation (the main
//   actor's mailbox) against the serial order, across the roots observed there.
//
// A clean report means the history is one serial order of whole propagations. The checker only
// relies on unique stored values and on the graph's functions being those the test declares.

/// How a node of the graph under test computes its value, for the reference model. Nodes are
/// numbered in the order they are given, and a node's sources come before it.
package enum HistoryNode: Sendable {
  /// An observable the test sets, with its initial value.
  case root(initial: Int)
  /// `source.map(transform)`: publishes `transform(source)` whenever `source` publishes.
  case map(Int, @Sendable (Int) -> Int)
  /// `source.filter(initial:isIncluded)`: publishes the source's value when it is included.
  case filter(Int, initial: Int, @Sendable (Int) -> Bool)
  /// `source.removeDuplicates()`: publishes the source's value when it differs from its own.
  case removeDuplicates(Int)
  /// Any `combineLatest` of `sources` (nested ones included), mapped to one `Int` by `combine`:
  /// publishes once per propagation in which any source published.
  case combine([Int], @Sendable ([Int]) -> Int)
  /// `selector.flatMapLatest { candidates[select($0)] }`: publishes the selected node's value
  /// once per propagation in which the selector or the (newly) selected node published.
  case switchTo(selector: Int, candidates: [Int], select: @Sendable (Int) -> Int)

  fileprivate var sources: [Int] {
    switch self {
    case .root: []
    case .map(let source, _), .filter(let source, _, _), .removeDuplicates(let source): [source]
    case .combine(let sources, _): sources
    case .switchTo(let selector, let candidates, _): [selector] + candidates
    }
  }
}

/// The option of one observer call, as recorded.
package enum HistoryOption: Sendable, Hashable, CustomStringConvertible {
  case initial, old, new

  package var description: String {
    switch self {
    case .initial: ".initial"
    case .old: ".old"
    case .new: ".new"
    }
  }
}

/// An observer whose calls the history records: the node it observes and the options it asked for.
package struct HistoryObserver: Sendable {
  package let node: Int
  package let options: Set<HistoryOption>
  /// For an observer whose calls wait for an isolation of their own (the main actor), a number
  /// naming that isolation: the `.new` calls of all its root observers must come in the serial
  /// order, whatever root they observe (one mailbox per isolation).
  package let isolation: Int?

  package init(node: Int, options: Set<HistoryOption>, isolation: Int? = nil) {
    self.node = node
    self.options = options
    self.isolation = isolation
  }
}

/// One entry of the log. Its place in the log is its real-time sequence number.
package enum HistoryEvent: Sendable {
  /// Thread `thread` is about to start propagation `step`; `queueable` if its set may be queued
  /// by the deadlock-avoidance rule, and return before it takes effect (a set made inside a
  /// callback, or one that a test makes while a callback blocks on it).
  case begin(step: Int, thread: Int, queueable: Bool)
  /// Propagation `step` stores `value` into root `node` (logged before the store).
  case store(step: Int, node: Int, value: Int)
  /// The call that made propagation `step` returned.
  case end(step: Int)
  /// A thread is about to register `observer`.
  case registering(observer: Int)
  /// The registering call of `observer` returned.
  case registered(observer: Int)
  /// `observer` was called with `option` and `value`, on the thread `thread` (for equality only).
  case publication(observer: Int, option: HistoryOption, value: Int, thread: UInt)
}

/// What ``PropagationHistory/check()`` found.
package struct HistoryReport: Sendable, CustomStringConvertible {
  package var propagations = 0
  package var publications = 0
  package var lost = 0
  package var impossible = 0
  package var duplicates = 0
  package var outOfOrder = 0
  package var brokenOldChains = 0
  package var ordering = 0
  /// The first few violations, described.
  package var examples: [String] = []
  /// The earliest place in the serial order where a violation was found, if any.
  package var firstViolation: Int?

  /// Whether the publications fit one serial order of whole propagations.
  package var isClean: Bool { violations == 0 }

  /// How many violations of every kind.
  package var violations: Int {
    lost + impossible + duplicates + outOfOrder + brokenOldChains + ordering
  }

  package var description: String {
    """
    \(propagations) propagations, \(publications) publications: \(lost) lost, \
    \(impossible) impossible, \(duplicates) duplicates, \(outOfOrder) out of order, \
    \(brokenOldChains) broken .old chains, \(ordering) ordering violations
    """
      + examples.map { "\n  - \($0)" }.joined()
  }

  fileprivate mutating func note(_ example: @autoclosure () -> String) {
    if examples.count < 8 { examples.append(example()) }
  }

  fileprivate mutating func noteViolation(at index: Int) {
    firstViolation = min(firstViolation ?? index, index)
  }
}

/// Runs `set` and tells whether it queued a propagation instead of waiting for a turn: that
/// propagation takes effect after the set returned (the Threading article's "When a setter
/// cannot wait"). Read from the library, not from how long the set took: a thread that would
/// close a cycle of waits queues at once.
package func mayQueue(_ set: () -> Void) -> Bool {
  let queued = propagationsQueuedByThisThread
  set()
  return propagationsQueuedByThisThread != queued
}

/// The recording side: a locked, append-only log of propagations and publications.
package final class PropagationHistory: @unchecked Sendable {
  package let nodes: [HistoryNode]
  private let lock = NSLock()
  // Guarded by `lock`.
  private var events: [HistoryEvent] = []
  private var observers: [HistoryObserver] = []
  private var steps = 0
  private var nested = 0

  /// Creates an empty history of the graph `nodes`.
  package init(nodes: [HistoryNode]) {
    for (index, node) in nodes.enumerated() {
      precondition(node.sources.allSatisfy { $0 < index }, "node \(index) precedes a source")
    }
    self.nodes = nodes
  }

  private func append(_ event: HistoryEvent) {
    lock.lock()
    events.append(event)
    lock.unlock()
  }

  /// Records a propagation: `stores` (root, value) in order, made by `body` on model thread
  /// `thread`, between its begin and its end; `queueable` as in ``HistoryEvent/begin(step:thread:queueable:)``.
  package func propagation(
    thread: Int, queueable: Bool = false, stores: [(node: Int, value: Int)], _ body: () -> Void
  ) {
    let (step, beginning): (Int, Int) = lock.withLock {
      steps += 1
      events.append(.begin(step: steps, thread: thread, queueable: queueable))
      let beginning = events.count - 1
      for store in stores {
        events.append(.store(step: steps, node: store.node, value: store.value))
      }
      return (steps, beginning)
    }
    let mayHaveBeenQueued = mayQueue(body)
    lock.withLock {
      // It counts from its beginning only, like a queueable one.
      if !queueable && mayHaveBeenQueued {
        events[beginning] = .begin(step: step, thread: thread, queueable: true)
      }
      events.append(.end(step: step))
    }
  }

  /// A value no other call returns, for sets made inside callbacks (negative, so that the tests'
  /// top-level values, positive, never collide with it).
  package func newNestedValue() -> Int {
    lock.withLock {
      nested += 1
      return -nested
    }
  }

  /// A new observer id for `node` and `options`, whose calls run in `isolation` (see
  /// ``HistoryObserver/isolation``).
  package func newObserver(node: Int, options: Set<HistoryOption>, isolation: Int? = nil) -> Int {
    lock.withLock {
      observers.append(HistoryObserver(node: node, options: options, isolation: isolation))
      return observers.count - 1
    }
  }

  /// Records the registering call `register` of `observer`, returning what it returns.
  package func registering<Result>(_ observer: Int, _ register: () -> Result) -> Result {
    append(.registering(observer: observer))
    let result = register()
    append(.registered(observer: observer))
    return result
  }

  /// Records a call of `observer`; call it first thing in the callback.
  package func publish(_ observer: Int, _ option: HistoryOption, _ value: Int) {
    append(.publication(observer: observer, option: option, value: value, thread: threadID()))
  }

  /// The log and the observers so far.
  package var snapshot: (events: [HistoryEvent], observers: [HistoryObserver]) {
    lock.withLock { (events, observers) }
  }

  /// Checks the history recorded so far (see the file's header).
  package func check() -> HistoryReport {
    let (events, observers) = snapshot
    return Self.check(nodes: nodes, observers: observers, events: events)
  }

  /// Checks a history, recorded or built by hand.
  package static func check(
    nodes: [HistoryNode], observers: [HistoryObserver], events: [HistoryEvent]
  ) -> HistoryReport {
    var checker = HistoryChecker(nodes: nodes, observers: observers, events: events)
    return checker.run()
  }
}

private func threadID() -> UInt {
  #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
  #else
    UInt(pthread_self())
  #endif
}

// MARK: - The checker

private struct HistoryChecker {
  struct Step {
    let id: Int
    var thread = 0
    var queueable = false
    var begin = 0
    var end = Int.max
    /// The last value stored per root, in the order the roots were first stored.
    var stores: [(node: Int, value: Int)] = []
    /// Where its first store was first published, if it ever was.
    var firstSeen = Int.max
  }

  struct Call {
    let position: Int
    let option: HistoryOption
    let value: Int
  }

  /// One change of a node in the replay.
  struct Change {
    let step: Int
    let old: Int
    let new: Int
  }

  let nodes: [HistoryNode]
  let observers: [HistoryObserver]
  let events: [HistoryEvent]
  var report = HistoryReport()

  /// The roots each node reads, directly or through other nodes.
  let roots: [Set<Int>]
  /// Per node, a number its group of joined nodes shares (connected through sources).
  let group: [Int]

  init(nodes: [HistoryNode], observers: [HistoryObserver], events: [HistoryEvent]) {
    self.nodes = nodes
    self.observers = observers
    self.events = events
    var roots: [Set<Int>] = []
    for (id, node) in nodes.enumerated() {
      switch node {
      case .root: roots.append([id])
      case .map(let source, _), .filter(let source, _, _), .removeDuplicates(let source):
        roots.append(roots[source])
      case .combine(let sources, _):
        roots.append(sources.reduce(into: []) { $0.formUnion(roots[$1]) })
      case .switchTo(let selector, let candidates, _):
        roots.append(([selector] + candidates).reduce(into: []) { $0.formUnion(roots[$1]) })
      }
    }
    self.roots = roots
    // The groups of joined roots: roots that a node reads together, transitively. A switch
    // joins its selector's graph with the selected candidate only while it selects it, so its
    // candidates do not count: two propagations of roots that only a switch connects may run
    // at the same time, in either order.
    var group = Array(nodes.indices)
    func leader(_ node: Int) -> Int {
      var node = node
      while group[node] != node { node = group[node] }
      return node
    }
    for node in nodes.indices {
      var joined = nodes[node].sources
      if case .switchTo(let selector, _, _) = nodes[node] { joined = [selector] }
      for source in joined { group[leader(source)] = leader(node) }
    }
    self.group = nodes.indices.map { leader($0) }
  }

  /// What the log says, parsed once.
  struct Parsed {
    var steps: [Int: Step] = [:]
    var calls: [[Call]]
    var registering: [Int]
    var registered: [Int]
    var stepOfValue: [Int: Int] = [:]
  }

  func parse() -> Parsed {
    var parsed = Parsed(
      calls: Array(repeating: [], count: observers.count),
      registering: Array(repeating: -1, count: observers.count),
      registered: Array(repeating: -1, count: observers.count))
    for (position, event) in events.enumerated() {
      switch event {
      case .begin(let step, let thread, let queueable):
        parsed.steps[step] = Step(id: step, thread: thread, queueable: queueable, begin: position)
      case .store(let step, let node, let value):
        if let index = parsed.steps[step]?.stores.firstIndex(where: { $0.node == node }) {
          parsed.steps[step]?.stores[index].value = value
        } else {
          parsed.steps[step]?.stores.append((node, value))
        }
      case .end(let step):
        parsed.steps[step]?.end = position
      case .registering(let observer):
        parsed.registering[observer] = position
      case .registered(let observer):
        parsed.registered[observer] = position
      case .publication(let observer, let option, let value, _):
        parsed.calls[observer].append(Call(position: position, option: option, value: value))
      }
    }
    for step in parsed.steps.values {
      for store in step.stores { parsed.stepOfValue[store.value] = step.id }
    }
    // Where each propagation first appears in a root's publications.
    for (observer, observed) in parsed.calls.enumerated() {
      guard case .root = nodes[observers[observer].node] else { continue }
      for call in observed where call.option == .new {
        if let step = parsed.stepOfValue[call.value],
          call.position < parsed.steps[step]!.firstSeen
        {
          parsed.steps[step]!.firstSeen = call.position
        }
      }
    }
    return parsed
  }

  mutating func run() -> HistoryReport {
    let parsed = parse()
    var order = parsed.steps.values.filter { !$0.stores.isEmpty }.sorted {
      let left = $0.firstSeen == .max ? $0.end : $0.firstSeen
      let right = $1.firstSeen == .max ? $1.end : $1.firstSeen
      return (left, $0.id) < (right, $1.id)
    }
    var best = evaluate(order, parsed)
    // The order of first appearance is the order of effect while graphs stay apart. A
    // `flatMapLatest` that switches joins another graph in the middle of its propagation, after
    // waiting for that graph's turn: a propagation of the other graph that ran entirely inside
    // it (in real time) then took effect before it, though the switching one appeared first in
    // its own roots. So when the first order does not explain the history, try moving a
    // propagation after ones that began before it returned (or after any, for a set made inside
    // a callback, which takes effect with the propagation that called it) and store none of its
    // roots (the roots' anchors do not order them), and keep the move that explains the most.
    // The propagations tried start 16 places before the first violation (a late registration
    // can show it far after the propagation that moves) and end 4 after it. Every order tried
    // is checked in full, so a clean report still means that one serial order explains every
    // call.
    var moves = 0
    while let first = best.firstViolation, moves < 32 {
      var improved: (order: [Step], report: HistoryReport)?
      let near = max(0, first - 16)..<min(order.count, first + 5)
      for index in near {
        let moving = order[index]
        let roots = Set(moving.stores.map(\.node))
        // Real time orders only calls that do not overlap: a set may take effect after one
        // that began before it returned, whichever returned first (a thread that gave its
        // turns back may return long after the propagation that took them next). A queueable
        // set may take effect after it returns (a set inside a callback belongs to the
        // propagation that called it).
        var farthest = index
        for later in (index + 1)..<order.count {
          let passed = order[later]
          guard passed.stores.allSatisfy({ !roots.contains($0.node) }),
            moving.queueable || passed.begin < moving.end
          else { break }
          farthest = later
        }
        // Every place up to 8 later, then farther ones more sparsely, and the farthest one: a
        // switch that waited long for the graph it selects takes effect after every propagation
        // of that graph that ran while it waited, which can be a hundred.
        var distances = Array(1...8) + [12, 16, 24, 32, 48, 64, 96, 128]
        distances.append(farthest - index)
        for later in Set(distances.map { index + $0 }).sorted()
        where later > index && later <= farthest {
          var candidate = order
          candidate.insert(candidate.remove(at: index), at: later)
          let report = evaluate(candidate, parsed)
          if report.violations < (improved?.report ?? best).violations {
            improved = (candidate, report)
          }
        }
      }
      guard let improved else { break }
      (order, best) = improved
      moves += 1
    }
    return best
  }

  /// The report for one candidate serial order.
  func evaluate(_ order: [Step], _ parsed: Parsed) -> HistoryReport {
    var checker = self
    checker.report.publications = parsed.calls.reduce(0) { $0 + $1.count }
    checker.report.propagations = order.count
    checker.checkOrder(order, parsed)
    let (changes, states, held) = replay(order)
    for observer in observers.indices {
      // The window of possible starting points: after every propagation whose (top-level) set
      // returned before the registering call began, and no later than the first propagation that
      // began after it returned.
      // An observer whose registration the log does not hold was registered before it began.
      // Only the propagations that store a root the node reads count: the others commute with
      // every change of the node, so a serial order may place them on either side of the
      // registration (one that ended before it may come after, in the order, a propagation of
      // the node's graph that was still running then).
      let (registering, registered) = (parsed.registering[observer], parsed.registered[observer])
      var low = 0
      var high = registering >= 0 ? order.count : 0
      let reads = roots[observers[observer].node]
      if registering >= 0 {
        for (index, step) in order.enumerated()
        where step.stores.contains(where: { reads.contains($0.node) }) {
          if !step.queueable && step.end < registering { low = max(low, index + 1) }
          if step.begin > registered { high = min(high, index) }
        }
      }
      low = min(low, high)
      checker.checkObserver(
        observer, calls: parsed.calls[observer], window: low...high, changes: changes,
        states: states, held: held)
    }
    return checker.report
  }

  /// The ordering checks on `order`: roots' observers agree with it, and so do real time and
  /// each thread's program order.
  mutating func checkOrder(_ order: [Step], _ parsed: Parsed) {
    let (calls, stepOfValue) = (parsed.calls, parsed.stepOfValue)
    var index: [Int: Int] = [:]
    for (offset, step) in order.enumerated() { index[step.id] = offset }
    for (observer, observed) in calls.enumerated() {
      guard case .root = nodes[observers[observer].node] else { continue }
      var previous: Int?
      for call in observed where call.option == .new {
        guard let step = stepOfValue[call.value], let current = index[step] else { continue }
        if let previous, current < previous {
          report.ordering += 1
          report.noteViolation(at: current)
          report.note(
            "ordering: observer \(observer) of root \(observers[observer].node) saw propagation "
              + "\(order[previous].id) before \(step), which took effect first elsewhere (a cycle)")
        }
        previous = current
      }
    }
    // One mailbox per isolation: the `.new` calls its root observers got, in the order they
    // ran there (the log's), may not put a propagation after one that every serial order puts
    // after it: a later propagation of the same group of joined roots (in `order`, which the
    // roots' observers fix within a group), or one that began after it returned (real time).
    // Propagations of different groups that overlapped in time may run there either way round.
    var runs: [Int: [(observer: Int, call: Call)]] = [:]
    for (observer, observed) in calls.enumerated() {
      guard let isolation = observers[observer].isolation,
        case .root = nodes[observers[observer].node]
      else { continue }
      runs[isolation, default: []] += observed.filter { $0.option == .new }.map { (observer, $0) }
    }
    for (isolation, run) in runs {
      let delivered = run.sorted { $0.call.position < $1.call.position }
      // Per group, the latest propagation (its place in `order`) whose call ran so far.
      var latestOfGroup: [Int: Int] = [:]
      // The latest beginning among the propagations whose calls ran so far.
      var latestBegin: (position: Int, step: Int)?
      for (observer, call) in delivered {
        guard let step = stepOfValue[call.value], let current = index[step] else { continue }
        let propagation = order[current]
        let groups = Set(propagation.stores.map { group[$0.node] })
        for group in groups {
          if let latest = latestOfGroup[group], current < latest {
            report.ordering += 1
            report.noteViolation(at: current)
            report.note(
              "ordering: isolation \(isolation) ran observer \(observer)'s call for propagation "
                + "\(step) after a call for \(order[latest].id), which took effect later")
          }
          latestOfGroup[group] = max(latestOfGroup[group] ?? current, current)
        }
        if let latestBegin, !propagation.queueable, propagation.end < latestBegin.position {
          report.ordering += 1
          report.noteViolation(at: current)
          report.note(
            "ordering: isolation \(isolation) ran observer \(observer)'s call for propagation "
              + "\(step) after a call for \(latestBegin.step), which began after it had returned")
        }
        if propagation.begin > latestBegin?.position ?? -1 {
          latestBegin = (propagation.begin, step)
        }
      }
    }
    // Real time: no propagation placed after one that began after it returned. A queueable set
    // may return before it takes effect, so only its beginning counts.
    var earliestEnd = Int.max
    var earliestEndStep = 0
    for (index, step) in order.enumerated().reversed() {
      if earliestEnd < step.begin {
        report.ordering += 1
        report.noteViolation(at: index)
        report.note(
          "ordering: propagation \(step.id) (thread \(step.thread)) took effect after "
            + "propagation \(earliestEndStep), whose set began after it had returned")
      }
      if !step.queueable && step.end < earliestEnd {
        earliestEnd = step.end
        earliestEndStep = step.id
      }
    }
  }

  /// Runs `order` through the reference model: per node, its changes, its value before each
  /// propagation (`states[k][node]`), and every value it held.
  func replay(_ order: [Step]) -> (changes: [[Change]], states: [[Int]], held: [Set<Int>]) {
    var values: [Int] = []
    for node in nodes {
      values.append(
        Self.initialValue(node, values))
    }
    var changes = Array(repeating: [Change](), count: nodes.count)
    var held = values.map { Set([$0]) }
    var states: [[Int]] = []
    states.reserveCapacity(order.count + 1)
    for (index, step) in order.enumerated() {
      states.append(values)
      var changed = Array(repeating: false, count: nodes.count)
      let stored = Dictionary(step.stores.map { ($0.node, $0.value) }) { _, last in last }
      for (id, node) in nodes.enumerated() {
        let old = values[id]
        var publishes = false
        switch node {
        case .root:
          if let value = stored[id] {
            values[id] = value
            publishes = true
          }
        case .map(let source, let transform):
          if changed[source] {
            values[id] = transform(values[source])
            publishes = true
          }
        case .filter(let source, _, let isIncluded):
          if changed[source] && isIncluded(values[source]) {
            values[id] = values[source]
            publishes = true
          }
        case .removeDuplicates(let source):
          if changed[source] && values[source] != old {
            values[id] = values[source]
            publishes = true
          }
        case .combine(let sources, let combine):
          if sources.contains(where: { changed[$0] }) {
            values[id] = combine(sources.map { values[$0] })
            publishes = true
          }
        case .switchTo(let selector, let candidates, let select):
          let selected = candidates[select(values[selector])]
          if changed[selector] || changed[selected] {
            values[id] = values[selected]
            publishes = true
          }
        }
        if publishes {
          changed[id] = true
          changes[id].append(Change(step: index, old: old, new: values[id]))
          held[id].insert(values[id])
        }
      }
    }
    states.append(values)
    return (changes, states, held)
  }

  static func initialValue(_ node: HistoryNode, _ values: [Int]) -> Int {
    switch node {
    case .root(let initial): initial
    case .map(let source, let transform): transform(values[source])
    case .filter(let source, let initial, let isIncluded):
      isIncluded(values[source]) ? values[source] : initial
    case .removeDuplicates(let source): values[source]
    case .combine(let sources, let combine): combine(sources.map { values[$0] })
    case .switchTo(let selector, let candidates, let select):
      values[candidates[select(values[selector])]]
    }
  }

  /// The violations of one observer's calls started at propagation `start`.
  struct Findings {
    var lost = 0
    var impossible = 0
    var duplicates = 0
    var outOfOrder = 0
    var brokenOldChains = 0
    var examples: [String] = []
    /// The earliest place in the serial order of a violation.
    var firstViolation: Int?

    var total: Int { lost + impossible + duplicates + outOfOrder + brokenOldChains }

    mutating func mark(_ index: Int) {
      firstViolation = min(firstViolation ?? index, index)
    }

    mutating func note(_ example: @autoclosure () -> String) {
      if examples.count < 3 { examples.append(example()) }
    }
  }

  mutating func checkObserver(
    _ observer: Int, calls: [Call], window: ClosedRange<Int>, changes: [[Change]],
    states: [[Int]], held: [Set<Int>]
  ) {
    // Try the latest starting points first (a registration usually lands at the end of its
    // window), at most 1 024 of them.
    var best: Findings?
    for start in window.reversed().prefix(1_024) {
      let findings = align(
        observer, calls: calls, start: start, changes: changes, states: states, held: held)
      if best == nil || findings.total < best!.total { best = findings }
      if findings.total == 0 { break }
    }
    guard let best else { return }
    report.lost += best.lost
    report.impossible += best.impossible
    report.duplicates += best.duplicates
    report.outOfOrder += best.outOfOrder
    report.brokenOldChains += best.brokenOldChains
    for example in best.examples { report.note(example) }
    if let index = best.firstViolation { report.noteViolation(at: index) }
  }

  func align(
    _ observer: Int, calls: [Call], start: Int, changes: [[Change]], states: [[Int]],
    held: [Set<Int>]
  ) -> Findings {
    let node = observers[observer].node
    let options = observers[observer].options
    let name = "observer \(observer) of node \(node)"
    var findings = Findings()
    let due = changes[node].filter { $0.step >= start }
    // Where in the serial order the aligned call at `cursor` is due.
    func place(_ cursor: Int) -> Int { cursor < due.count ? due[cursor].step : start }
    var registrationValue = states[start][node]
    var rest = calls[...]
    // `.initial`: exactly once, first, with the node's value at the starting point.
    if options.contains(.initial) {
      if let first = rest.first, first.option == .initial {
        rest = rest.dropFirst()
        if first.value != registrationValue {
          if held[node].contains(first.value) {
            findings.outOfOrder += 1
          } else {
            findings.impossible += 1
          }
          findings.mark(start)
          findings.note(
            "\(name): .initial(\(first.value)) at log position \(first.position); the state "
              + "there was \(registrationValue)")
          registrationValue = first.value
        }
      } else {
        findings.lost += 1
        findings.mark(start)
        findings.note("\(name) got no .initial first")
      }
    }
    // `.old` chain.
    if options.contains(.old) {
      var last = registrationValue
      var pendingOld = false
      for call in rest {
        switch call.option {
        case .old:
          if call.value != last || (pendingOld && options.contains(.new)) {
            findings.brokenOldChains += 1
            findings.mark(start)
            findings.note(
              "\(name): .old(\(call.value)) at log position \(call.position) after value \(last)")
          }
          pendingOld = true
        case .new:
          if !pendingOld {
            findings.brokenOldChains += 1
            findings.mark(start)
            findings.note("\(name): .new(\(call.value)) at \(call.position) without its .old")
          }
          pendingOld = false
          last = call.value
        case .initial:
          break
        }
      }
    }
    for call in rest where call.option == .initial {
      findings.duplicates += 1
      findings.mark(start)
      findings.note("\(name): a second .initial at log position \(call.position)")
    }
    // The aligned sequence: `.new` calls, or `.old` ones for an observer without `.new`.
    let aligned: HistoryOption = options.contains(.new) ? .new : .old
    let expected = due.map { aligned == .new ? $0.new : $0.old }
    var cursor = 0
    for call in rest where call.option == aligned {
      if let match = expected[cursor...].firstIndex(of: call.value) {
        if match > cursor {
          findings.lost += match - cursor
          findings.mark(place(cursor))
          findings.note(
            "\(name): \(match - cursor) publication(s) lost before \(aligned)(\(call.value)) at "
              + "log position \(call.position), first \(expected[cursor]) of propagation #"
              + "\(due[cursor].step) in the serial order")
        }
        cursor = match + 1
      } else if cursor > 0 && expected[cursor - 1] == call.value {
        findings.duplicates += 1
        findings.mark(place(cursor))
        findings.note("\(name): \(aligned)(\(call.value)) again at log position \(call.position)")
      } else if held[node].contains(call.value) || call.value == registrationValue {
        findings.outOfOrder += 1
        findings.mark(place(cursor))
        // A change the starting point puts before the registration, though its propagation
        // was still running then: it may take effect after propagations that ended before the
        // registration began and commute with it, which only a move of it explains. Mark it,
        // so that the search for a better order tries moving it.
        if call.value == registrationValue,
          let producer = changes[node].last(where: { $0.step < start && $0.new == call.value })
        {
          findings.mark(producer.step)
        }
        findings.note(
          "\(name): \(aligned)(\(call.value)) at log position \(call.position) is out of order")
      } else {
        findings.impossible += 1
        findings.mark(place(cursor))
        findings.note(
          "\(name): \(aligned)(\(call.value)) at log position \(call.position) never existed"
            + (cursor < expected.count ? " (due: \(expected[cursor]))" : ""))
      }
    }
    if cursor < expected.count {
      findings.lost += expected.count - cursor
      findings.mark(place(cursor))
      findings.note(
        "\(name): \(expected.count - cursor) publication(s) never made, the first "
          + "\(expected[cursor]) of propagation #\(due[cursor].step) in the serial order")
    }
    return findings
  }
}
