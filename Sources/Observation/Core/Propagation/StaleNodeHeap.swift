/// The derived nodes a propagation has made stale, in the order they must be recomputed: lowest
/// rank first and, among equal ranks, first scheduled first.
///
/// A binary min-heap keyed by (rank, scheduling order): O(log n) per node scheduled and per node
/// taken, for n nodes waiting, so a change that makes n nodes stale costs O(n log n) in all
/// rather than the O(n²) of scanning every waiting node for the lowest rank. The order key makes
/// the result independent of the heap's shape: two nodes of equal rank come out in the order
/// they went in.
///
/// A node's rank is read when it is scheduled, and again when it comes out: a rank that rose
/// meanwhile (a `flatMapLatest` upstream switched to a higher-ranked observable) puts the node
/// back at its new rank, so it still runs after everything now below it. Owned by one
/// `ObservationContext`, so only its thread touches it.
struct StaleNodeHeap {
  private struct Entry {
    let rank: Int
    let order: UInt64
    let node: any PropagationNode

    @inline(__always)
    func precedes(_ other: Entry) -> Bool {
      rank != other.rank ? rank < other.rank : order < other.order
    }
  }

  private var entries: [Entry] = []
  /// Counts insertions, so that equal ranks keep their scheduling order.
  private var nextOrder: UInt64 = 0

  var isEmpty: Bool { entries.isEmpty }

  /// Adds `node` at its current rank.
  mutating func insert(_ node: any PropagationNode) {
    push(Entry(rank: node.rank, order: nextOrder, node: node))
    nextOrder &+= 1
  }

  /// Removes and returns the node that must be recomputed next, or `nil` when none waits.
  mutating func popLowest() -> (any PropagationNode)? {
    while let entry = popEntry() {
      let rank = entry.node.rank
      guard rank > entry.rank else { return entry.node }
      // Keeps its place among the nodes of its new rank: scheduled when it was.
      push(Entry(rank: rank, order: entry.order, node: entry.node))
    }
    return nil
  }

  private mutating func push(_ entry: Entry) {
    entries.append(entry)
    var child = entries.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard entry.precedes(entries[parent]) else { break }
      entries[child] = entries[parent]
      child = parent
    }
    entries[child] = entry
  }

  private mutating func popEntry() -> Entry? {
    guard let last = entries.popLast() else { return nil }
    guard !entries.isEmpty else { return last }
    let lowest = entries[0]
    // Sift the last entry down from the root, moving the preceding child up at each level.
    let count = entries.count
    var parent = 0
    while true {
      let left = 2 * parent + 1
      guard left < count else { break }
      let right = left + 1
      let child = right < count && entries[right].precedes(entries[left]) ? right : left
      guard entries[child].precedes(last) else { break }
      entries[parent] = entries[child]
      parent = child
    }
    entries[parent] = last
    return lowest
  }
}
