extension ArrayChangeSet {
  /// Applies this change to `old`, the elements before it: matched elements are taken from
  /// `old` (moved where the change moved them), inserted and updated ones from ``elements``.
  ///
  /// A replica that starts from `.initial` and applies every change set it receives holds the
  /// array's elements after each one:
  ///
  /// ```swift
  /// var replica: [Todo] = []
  /// let token = todos.observe(options: [.initial, .new]) { changes in
  ///   replica = changes.applying(to: replica)
  /// }
  /// ```
  ///
  /// - Parameter old: The elements before the change; its count must be ``oldCount``, or this
  ///   traps with "applying a change set to a collection of the wrong count".
  /// - Returns: The elements after the change.
  /// - Complexity: O(*n*).
  public func applying(to old: some Collection<Element>) -> [Element] {
    require(old.count == oldCount, "applying a change set to a collection of the wrong count")
    let oldElements = Array(old)
    let origins = origins()
    let updated = updatedFlags()
    var result: [Element] = []
    result.reserveCapacity(elements.count)
    for new in 0..<elements.count {
      let origin = origins[new]
      result.append(origin >= 0 && !updated[new] ? oldElements[origin] : elements[new])
    }
    return result
  }

  /// This change as a `CollectionDifference` from `old`, the elements before it.
  ///
  /// Removals and insertions map one to one. A move becomes a removal and an insertion
  /// associated with each other; an update (`CollectionDifference` has none) becomes a removal
  /// of the old element and an insertion of the new one, not associated, also when it moved.
  /// So `old.applying(changes.difference(from: old))` equals ``elements``.
  ///
  /// - Parameter old: The elements before the change; its count must be ``oldCount``.
  /// - Returns: The difference.
  /// - Complexity: O(*n*).
  public func difference(from old: some Collection<Element>) -> CollectionDifference<Element> {
    require(old.count == oldCount, "applying a change set to a collection of the wrong count")
    let oldElements = Array(old)
    var isUpdated = [Bool](repeating: false, count: elements.count)
    var changes: [CollectionDifference<Element>.Change] = []
    changes.reserveCapacity(2 * changeCount)
    for update in updates {
      isUpdated[update.new] = true
      changes.append(
        .remove(offset: update.old, element: oldElements[update.old], associatedWith: nil))
      changes.append(
        .insert(offset: update.new, element: elements[update.new], associatedWith: nil))
    }
    for move in moves where !isUpdated[move.new] {
      changes.append(
        .remove(offset: move.old, element: oldElements[move.old], associatedWith: move.new))
      changes.append(
        .insert(offset: move.new, element: elements[move.new], associatedWith: move.old))
    }
    for old in removals {
      changes.append(.remove(offset: old, element: oldElements[old], associatedWith: nil))
    }
    for new in insertions {
      changes.append(.insert(offset: new, element: elements[new], associatedWith: nil))
    }
    guard let difference = CollectionDifference(changes) else {
      preconditionFailure("a change set that is not a valid difference: \(self)")
    }
    return difference
  }
}
