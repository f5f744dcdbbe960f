extension ArrayChangeSet {
  /// The change from `old` to `new`, matching elements by identity.
  ///
  /// Equal ids match; when an id occurs several times, its *k*-th occurrence in `old` matches
  /// its *k*-th occurrence in `new`, and the extra ones are removed or inserted (duplicates never
  /// trap). Matched elements for which `isUpdated` returns `true` are updates. Moves are the
  /// matched elements outside one longest run that kept its order, so they are as few as can
  /// be.
  ///
  /// ```swift
  /// let changes = ArrayChangeSet<String>.difference(
  ///   from: ["A", "B", "C", "D"], to: ["B", "C", "D", "A"], id: { $0 }, isUpdated: { _, _ in false }
  /// )
  /// print(changes.moves)  // [0→3]
  /// ```
  ///
  /// - Parameters:
  ///   - old: The elements before.
  ///   - new: The elements after.
  ///   - id: An element's identity.
  ///   - isUpdated: Whether a matched element changed, given its old and new value.
  /// - Returns: The change set, whose ``elements`` holds `new`.
  /// - Complexity: O(*n* + *m* log *m*) for *n* elements and *m* matched ones: one hash table
  ///   over the old ids, one probe per new element, and the longest-run step for the moves.
  @inlinable
  public static func difference<ID: Hashable>(
    from old: some Collection<Element>,
    to new: some Collection<Element>,
    id: (Element) throws -> ID,
    isUpdated: (Element, Element) throws -> Bool
  ) rethrows -> ArrayChangeSet {
    try difference(from: ArraySnapshot(old), to: ArraySnapshot(new), id: id, isUpdated: isUpdated)
  }

  // Inlinable, so that the caller's module specializes the hash table for its id type: in
  // this module's unspecialized code every hash and comparison goes through a witness table.
  @inlinable
  static func difference<ID: Hashable>(
    from old: ArraySnapshot<Element>,
    to new: ArraySnapshot<Element>,
    id: (Element) throws -> ID,
    isUpdated: (Element, Element) throws -> Bool
  ) rethrows -> ArrayChangeSet {
    // Each id maps to its first unmatched old offset; `next` chains its later occurrences, so
    // matching one hands the id to the next occurrence without hashing again.
    var table = [ID: Int](minimumCapacity: old.count)
    var next = [Int](repeating: -1, count: old.count)
    // Read through the buffers: the snapshots' subscripts would check every offset again.
    let oldElements = old.buffer.base
    let newElements = new.buffer.base
    for offset in (0..<old.count).reversed() {
      next[offset] = table.updateValue(offset, forKey: try id(oldElements[offset])) ?? -1
    }
    var origins = [Int](repeating: -1, count: new.count)
    var updated = [Bool](repeating: false, count: new.count)
    for offset in 0..<new.count {
      let element = newElements[offset]
      guard let slot = table.index(forKey: try id(element)) else { continue }
      let origin = table.values[slot]
      guard origin >= 0 else { continue }
      table.values[slot] = next[origin]
      origins[offset] = origin
      if try isUpdated(oldElements[origin], element) { updated[offset] = true }
    }
    return build(elements: new, origins: origins, updated: updated, oldCount: old.count)
  }
}
