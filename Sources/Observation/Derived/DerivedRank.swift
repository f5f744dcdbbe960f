/// The rank of a derived observable: above the rank of every observable it reads, so that a
/// propagation recomputes it after all of them (see `ObservationContext`).
///
/// A root ``Observable`` has rank 0 and no `DerivedRank`. A derived observable gets its rank
/// when it is built, 1 + the highest rank of its sources, and each source records it as a
/// dependent. A `flatMapLatest` reads the observable it selects as well, which changes at run
/// time: each switch calls ``follow(_:)`` on the selected observable's rank, which raises the
/// switching observable above it if needed, and with it, transitively, every derived
/// observable built on it. Ranks only ever rise, so a rank is above every source a derived
/// observable reads now or read before; the order only needs that much.
///
/// Every rank lives under one lock, `graphLock`, because a raise walks many of them; reads take
/// it too, since a propagation on one thread reads ranks that a switch on another raises.
final class DerivedRank {
  /// Guards `storedValue` and the edges of every rank. Never deallocated.
  private static let graphLock = Lock()

  private var lock: Lock { DerivedRank.graphLock }
  // Guarded by `lock`.
  private var storedValue: Int

  /// The edges of a rank that can rise (see ``Edges``); `nil` for one that cannot: it is
  /// neither a `flatMapLatest`'s nor built on a rank that can rise. Such a rank never needs
  /// raising above, so it records no dependents, and a chain of `map` keeps no edges per level.
  private let edges: Edges?

  /// What a rank that can rise keeps, guarded by `lock`.
  private final class Edges {
    /// The ranks built on this one, which must stay above it. Dead entries are dropped when
    /// the list has doubled since the last sweep, so a long-lived source whose derived
    /// observables come and go keeps a list proportional to the live ones.
    var dependents: [WeakRank] = []
    var sweepThreshold = 8
    /// The ranks ``DerivedRank/follow(_:)`` has made this one a dependent of, so that selecting
    /// the same observable again adds no second entry to its list. Swept like `dependents`.
    var followed: [WeakRank] = []
  }

  /// The graph the derived observable belongs to: its sources' graphs, joined (see
  /// ``PropagationGraph/join(_:)``). It may join more graphs later, never fewer.
  let graph: PropagationGraph

  /// Ranks a new derived observable above `sources` and records it as their dependent, and
  /// joins their graphs into the one it belongs to.
  ///
  /// - Parameters:
  ///   - sources: The observables the derived observable reads.
  ///   - switching: Whether the derived observable is a `flatMapLatest`, whose rank rises
  ///     when it switches (see ``follow(_:)``).
  convenience init(above sources: [any DerivedSource], switching: Bool = false) {
    let graph = PropagationGraph.join(sources.map(\.propagationGraph))
    if switching { graph.markSwitching() }
    // Joining may have waited for turns; outside a propagation, nothing needs them any more.
    ObservationContext.current.giveBackTurnsIfOutside()
    self.init(graph: graph, ranks: sources.map(\.rank), switching: switching)
  }

  /// Ranks a new derived observable that reads one source whose rank can rise (see
  /// ``Rank/above(_:graph:)``): the same as `init(above: [source])`, without its arrays. Its
  /// graph is the source's, which a join of one graph would return, waiting for nothing.
  ///
  /// - Parameters:
  ///   - source: The rank of the observable the derived observable reads.
  ///   - graph: That observable's graph.
  convenience init(above source: DerivedRank, graph: PropagationGraph) {
    self.init(graph: graph, ranks: CollectionOfOne(Rank.tracked(source)), switching: false)
  }

  /// Ranks a new derived observable in `graph` above `ranks`, its sources' ranks, and records
  /// it as the dependent of those that are tracked.
  private init(graph: PropagationGraph, ranks: some Collection<Rank>, switching: Bool) {
    self.graph = graph
    let canRise = switching || ranks.contains { $0.canRise }
    edges = canRise ? Edges() : nil
    let lock = DerivedRank.graphLock
    lock.lock()
    var highest = 0
    for rank in ranks { highest = max(highest, rank.valueLocked) }
    storedValue = highest + 1
    for case .tracked(let source) in ranks { source.addDependentLocked(self) }
    lock.unlock()
  }

  /// Whether this rank can rise: it has edges (see ``edges``).
  fileprivate var canRise: Bool { edges != nil }
  /// The current rank; `lock` held.
  fileprivate var valueLocked: Int { storedValue }

  /// The current rank.
  var value: Int {
    lock.lock()
    defer { lock.unlock() }
    return storedValue
  }

  /// Makes this rank stay above `source` from now on, and raises it (and every rank built on
  /// it) if it is not above it now.
  ///
  /// Joins the graph of `selected` too, so that a propagation through the `flatMapLatest` and
  /// one of the selected observable never run at once.
  ///
  /// - Parameter selected: The observable a `flatMapLatest` switched to.
  /// - Returns: Whether this rank rose.
  func follow(_ selected: any DerivedSource) -> Bool {
    if !PropagationGraph.joinSwitching(graph, to: selected.propagationGraph) {
      ObservationContext.current.deferJoin(graph, selected.propagationGraph)
    }
    guard let edges else { preconditionFailure("only a flatMapLatest's rank follows") }
    lock.lock()
    defer { lock.unlock() }
    let source: DerivedRank
    switch selected.rank {
    case .level(let level):
      // A fixed level never rises, so this rank need not follow it, only be above it now.
      guard storedValue <= Int(level) else { return false }
      raiseLocked(to: Int(level) + 1)
      return true
    case .tracked(let tracked): source = tracked
    }
    require(
      source !== self,
      "flatMapLatest selected an observable derived from the flatMapLatest itself")
    if !edges.followed.contains(where: { $0.rank === source }) {
      if edges.followed.count >= 8 { edges.followed.removeAll { $0.rank == nil } }
      edges.followed.append(WeakRank(rank: source))
      source.addDependentLocked(self)
    }
    guard storedValue <= source.storedValue else { return false }
    raiseLocked(to: source.storedValue + 1)
    return true
  }

  /// Sets this rank to `rank` and raises its dependents, breadth first, to stay above it.
  private func raiseLocked(to rank: Int) {
    storedValue = rank
    var work = [self]
    while let raised = work.popLast() {
      // A rank without edges has no dependents.
      for weakDependent in raised.edges?.dependents ?? [] {
        guard let dependent = weakDependent.rank, dependent.storedValue <= raised.storedValue
        else { continue }
        // Only a switch adds an edge to an existing rank, so a cycle runs through this one.
        require(
          dependent !== self,
          "flatMapLatest selected an observable derived from the flatMapLatest itself")
        dependent.storedValue = raised.storedValue + 1
        work.append(dependent)
      }
    }
  }

  private func addDependentLocked(_ dependent: DerivedRank) {
    guard let edges else { return }
    if edges.dependents.count >= edges.sweepThreshold {
      edges.dependents.removeAll { $0.rank == nil }
      edges.sweepThreshold = max(8, edges.dependents.count * 2)
    }
    edges.dependents.append(WeakRank(rank: dependent))
  }
}

/// The rank of an observable: a level that never changes, or a ``DerivedRank`` that a switch
/// may raise or that a pipeline shares. A root ``Observable`` is at level 0; a derived value
/// computed inline from one source whose rank cannot rise is one level above it, so a chain of
/// `map` holds a number per level instead of an object.
enum Rank {
  /// A rank that never rises. 32 bits, so that the enum is one word (a chain of 2³² levels stops
  /// at a precondition).
  case level(UInt32)
  /// A rank kept by a ``DerivedRank``: a `flatMapLatest`'s, one built on such a rank, or a
  /// pipeline's.
  case tracked(DerivedRank)

  /// The rank of a new derived observable computed inline from `source`, which is in `graph`:
  /// one level above it, or a ``DerivedRank`` above it when its rank can rise.
  static func above(_ source: any DerivedSource, graph: PropagationGraph) -> Rank {
    let level: Int
    switch source.rank {
    case .level(let sourceLevel): level = Int(sourceLevel)
    case .tracked(let rank):
      if rank.canRise { return .tracked(DerivedRank(above: rank, graph: graph)) }
      // Without edges a tracked rank never changes.
      level = rank.value
    }
    precondition(level < Int(UInt32.max), "a chain of derived observables is too deep")
    return .level(UInt32(level + 1))
  }

  /// Whether the rank can rise.
  fileprivate var canRise: Bool {
    guard case .tracked(let rank) = self else { return false }
    return rank.canRise
  }

  /// The current value; `DerivedRank`'s lock held.
  fileprivate var valueLocked: Int {
    switch self {
    case .level(let level): Int(level)
    case .tracked(let rank): rank.valueLocked
    }
  }
}

/// What a new derived observable needs of each source: its rank and its graph.
protocol DerivedSource: AnyObject {
  /// The source's rank: level 0 for a root observable.
  var rank: Rank { get }
  /// The source's graph (see ``PropagationGraph``).
  var propagationGraph: PropagationGraph { get }
}

extension ReadOnlyObservable: DerivedSource {
  var rank: Rank {
    (self as? DerivedObservable<Value>)?.ranking ?? .level(0)
  }
}

/// A weak reference to a dependent rank: a rank does not keep the observables built on it alive.
private struct WeakRank {
  weak var rank: DerivedRank?
}
