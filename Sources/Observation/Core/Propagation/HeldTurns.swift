/// The graphs whose turn one thread holds, in the order it took them (see ``PropagationGraph``
/// and ``ObservationContext``).
///
/// Most propagations take one turn, of the graph of the observable they set: that one is kept in
/// a field of its own, so taking and giving it back touches no array (a uniqueness and a capacity
/// check each way, on every set). Later turns go to `rest`. Past a few turns (a transaction over
/// many observables holds one per graph), their identities are kept too, so asking whether one
/// is held costs O(1) rather than a scan.
///
/// Holds each graph strongly: a turn taken by a set inside a callback is given back when the
/// outermost propagation ends, possibly after its observable, and with it the graph, was let go.
struct HeldTurns {
  /// The turn taken first; `nil` when none is held.
  private var first: PropagationGraph?
  /// The turns taken after `first`, in order.
  private var rest: [PropagationGraph] = []
  /// The identities of the graphs in `rest` once it holds four or more; empty otherwise.
  private var identities: Set<ObjectIdentifier> = []

  @inline(__always)
  var count: Int {
    first == nil ? 0 : 1 + rest.count
  }

  @inline(__always)
  var isEmpty: Bool {
    first == nil
  }

  /// The turn taken last; there must be one.
  @inline(__always)
  var last: PropagationGraph {
    rest.last ?? first.unsafelyUnwrapped
  }

  /// Whether `graph` is one of the held graphs (as taken, not through a join).
  @inline(__always)
  func contains(_ graph: PropagationGraph) -> Bool {
    guard let first else { return false }
    if first === graph { return true }
    guard identities.isEmpty else { return identities.contains(ObjectIdentifier(graph)) }
    for held in rest where held === graph { return true }
    return false
  }

  /// The position, in taking order, of the first held graph `isMatch` accepts.
  func firstIndex(where isMatch: (PropagationGraph) -> Bool) -> Int? {
    guard let first else { return nil }
    if isMatch(first) { return 0 }
    return rest.firstIndex(where: isMatch).map { $0 + 1 }
  }

  @inline(__always)
  mutating func append(_ graph: PropagationGraph) {
    guard first != nil else {
      first = graph
      return
    }
    rest.append(graph)
    guard rest.count >= 4 else { return }
    if identities.isEmpty {
      identities = Set(rest.lazy.map(ObjectIdentifier.init))
    } else {
      identities.insert(ObjectIdentifier(graph))
    }
  }

  /// Forgets the turn taken last; there must be one.
  @inline(__always)
  mutating func removeLast() {
    guard !rest.isEmpty else {
      first = nil
      return
    }
    let graph = rest.removeLast()
    guard !identities.isEmpty else { return }
    identities.remove(ObjectIdentifier(graph))
    if rest.count < 4 { identities.removeAll(keepingCapacity: true) }
  }
}
