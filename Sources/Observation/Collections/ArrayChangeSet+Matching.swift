// A change set's matching: for each element after the change, the offset it had before (or -1
// when it was inserted). Diffing, batch edits and transactions produce a matching; the change
// set is built from it, with the moves chosen by one longest increasing subsequence.

extension ArrayChangeSet {
  /// Builds the change set of a matching.
  ///
  /// - Parameters:
  ///   - elements: The elements after the change.
  ///   - origins: For each offset of `elements`, the matched offset before the change, or -1 for
  ///     an inserted element. Each old offset appears at most once.
  ///   - updated: For each offset of `elements`, whether a matched element's content changed;
  ///     empty when none did.
  ///   - oldCount: The number of elements before the change.
  ///   - isReset: Whether the change is a reset (see ``isReset``).
  /// - Returns: The change set, with minimal moves.
  /// - Complexity: O(*n* log *n*) for *n* matched elements (the subsequence), O(*n*) otherwise.
  @usableFromInline
  static func build(
    elements: ArraySnapshot<Element>, origins: [Int], updated: [Bool], oldCount: Int,
    isReset: Bool = false
  ) -> ArrayChangeSet {
    // Every array is sized before it is filled, so the allocations do not grow with the count.
    let matchedCount = origins.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
    var isKept = [Bool](repeating: false, count: oldCount)
    var insertions: [Int] = []
    insertions.reserveCapacity(origins.count - matchedCount)
    var matched: [Int] = []  // new offsets of the matched elements, ascending
    matched.reserveCapacity(matchedCount)
    var matchedOrigins: [Int] = []  // their old offsets, in the same order
    matchedOrigins.reserveCapacity(matchedCount)
    for (new, old) in origins.enumerated() {
      if old < 0 {
        insertions.append(new)
      } else {
        isKept[old] = true
        matched.append(new)
        matchedOrigins.append(old)
      }
    }
    var removals: [Int] = []
    removals.reserveCapacity(oldCount - matchedCount)
    for old in 0..<oldCount where !isKept[old] { removals.append(old) }
    let staying = longestIncreasingRun(of: matchedOrigins)
    var moves: [Match] = []
    moves.reserveCapacity(staying.count - staying.reduce(0) { $0 + ($1 ? 1 : 0) })
    var updates: [Match] = []
    if !updated.isEmpty { updates.reserveCapacity(updated.reduce(0) { $0 + ($1 ? 1 : 0) }) }
    for (position, new) in matched.enumerated() {
      if !staying[position] { moves.append(Match(old: origins[new], new: new)) }
      if !updated.isEmpty && updated[new] { updates.append(Match(old: origins[new], new: new)) }
    }
    return ArrayChangeSet(
      elements: elements, removals: removals, insertions: insertions, moves: moves,
      updates: updates, isReset: isReset)
  }

  /// For each offset of ``elements``, the offset the element had before the change, or -1 when
  /// it was inserted.
  ///
  /// - Complexity: O(*n*).
  func origins() -> [Int] {
    var origins = [Int](repeating: -1, count: elements.count)
    var isPlaced = [Bool](repeating: false, count: elements.count)
    for new in insertions { isPlaced[new] = true }
    var isMoveSource = [Bool](repeating: false, count: oldCount)
    for move in moves {
      origins[move.new] = move.old
      isPlaced[move.new] = true
      isMoveSource[move.old] = true
    }
    // The elements that stayed pair up in order: old offsets neither removed nor moved, with new
    // offsets neither inserted nor moved.
    var removal = 0
    var old = 0
    for new in 0..<elements.count where !isPlaced[new] {
      while true {
        if removal < removals.count && removals[removal] == old {
          removal += 1
        } else if isMoveSource[old] {
          // Skipped.
        } else {
          break
        }
        old += 1
      }
      origins[new] = old
      old += 1
    }
    return origins
  }

  /// For each offset of ``elements``, whether it is in ``updates``.
  func updatedFlags() -> [Bool] {
    var flags = [Bool](repeating: false, count: elements.count)
    for update in updates { flags[update.new] = true }
    return flags
  }

  /// The change set of this change followed by `next`: one change from the array before this
  /// one to the array after `next`.
  ///
  /// - Complexity: O(*n* log *n*).
  func merged(with next: ArrayChangeSet) -> ArrayChangeSet {
    precondition(next.oldCount == elements.count, "merging change sets that do not follow")
    let first = origins()
    let firstUpdated = updatedFlags()
    let second = next.origins()
    var updated = next.updatedFlags()
    var origins = [Int](repeating: -1, count: second.count)
    for (new, middle) in second.enumerated() where middle >= 0 {
      origins[new] = first[middle]
      if firstUpdated[middle] { updated[new] = true }
    }
    guard !isReset && !next.isReset else {
      return .reset(from: oldCount, to: next.elements)
    }
    return .build(
      elements: next.elements, origins: origins, updated: updated, oldCount: oldCount)
  }
}

/// Marks one longest strictly increasing subsequence of `values`.
///
/// - Returns: For each position of `values`, whether it belongs to the subsequence.
/// - Complexity: O(*n* log *n*) (patience sorting with predecessor links).
func longestIncreasingRun(of values: [Int]) -> [Bool] {
  var isInRun = [Bool](repeating: false, count: values.count)
  guard !values.isEmpty else { return isInRun }
  // tails[k]: the position ending the best run of length k + 1 found so far (smallest last value).
  var tails: [Int] = []
  tails.reserveCapacity(values.count)
  var predecessor = [Int](repeating: -1, count: values.count)
  for (position, value) in values.enumerated() {
    // Most runs of a real edit are long and in order: extending the longest run needs no search.
    if let last = tails.last, values[last] < value {
      predecessor[position] = last
      tails.append(position)
      continue
    }
    var low = 0
    var high = tails.count
    while low < high {
      let middle = (low + high) / 2
      if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
    }
    if low > 0 { predecessor[position] = tails[low - 1] }
    if low == tails.count { tails.append(position) } else { tails[low] = position }
  }
  var position = tails[tails.count - 1]
  while position >= 0 {
    isInRun[position] = true
    position = predecessor[position]
  }
  return isInRun
}
