/// The derived nodes a propagation has made stale, in the order they must be recomputed: lowest
/// rank first and, among equal ranks, first scheduled first.
///
/// Keyed by (rank, scheduling order), so two nodes of equal rank come out in the order they went
/// in. Nodes usually arrive already in that order (a source's round schedules its derived
/// values at one rank; a recomputation schedules the values above it): those queue in a FIFO
/// *run*, O(1) each, however many wait. A node that arrives below the run's last (a lower rank
/// scheduled after a higher one) goes to a binary min-heap, O(log n). Taking compares the two
/// fronts. Either way a change that makes n nodes stale costs at most O(n log n) in all, rather
/// than the O(n²) of scanning every waiting node for the lowest rank, and a fan-out of n nodes
/// of one rank costs O(n): a heap alone paid a sift through a tree of n entries per node taken,
/// a third of a large fan-out's flush.
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

  /// Entries in ascending (rank, order) from `runHead` on; those before it have been taken.
  private var run: [Entry] = []
  private var runHead = 0
  /// The entries that arrived out of the run's order, as a binary min-heap.
  private var entries: [Entry] = []
  /// Counts insertions, so that equal ranks keep their scheduling order.
  private var nextOrder: UInt64 = 0

  var isEmpty: Bool { entries.isEmpty && runHead == run.count }

  /// Adds `node` at its current rank.
  mutating func insert(_ node: any PropagationNode) {
    let entry = Entry(rank: node.rank, order: nextOrder, node: node)
    nextOrder &+= 1
    if runHead == run.count || !entry.precedes(run[run.count - 1]) {
      run.append(entry)
    } else {
      push(entry)
    }
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
    if runHead < run.count && (entries.isEmpty || run[runHead].precedes(entries[0])) {
      let entry = run[runHead]
      runHead += 1
      if runHead == run.count {
        // Drained: start the next run from the front (the taken entries still hold their nodes).
        run.removeAll(keepingCapacity: true)
        runHead = 0
      }
      return entry
    }
    return popHeap()
  }

  private mutating func popHeap() -> Entry? {
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
