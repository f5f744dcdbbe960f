extension ReadOnlyObservableArray {
  /// Returns a read-only array of `transform` applied to each element, kept up to date change
  /// by change.
  ///
  /// `transform` runs only for inserted and updated elements; removals and moves reuse the
  /// results already computed, and the derived array delivers the same change set structure as
  /// this one (one change set per change of this array).
  ///
  /// ```swift
  /// let titles = todos.map { $0.title }
  /// ```
  ///
  /// > Important: The derived array changes synchronously, inside the round that delivers this
  /// > array's change set, at the registration `map` made, like ``ReadOnlyObservable/map(_:)``:
  /// > its one input is final then, so it never shows a state that did not exist. `transform`
  /// > is never called concurrently with itself, and no lock is held while it runs.
  ///
  /// It keeps this array alive and lives as long as its users hold it, by the rule of
  /// ``ReadOnlyObservable/map(_:)``: a variable, or a registration on it for as long as the
  /// registration lasts (a token from ``observe(options:isolation:_:)`` until it is cancelled or
  /// released, an owner's registration or a binding while the owner lives; after the owner dies,
  /// the derived array is released at its next change).
  ///
  /// - Parameter transform: Computes a derived element.
  /// - Returns: The derived array.
  /// - Complexity: An append costs O(1) plus `transform`; any other change O(*n*) plus
  ///   `transform` for its inserted and updated elements.
  public func map<Result>(
    _ transform: @escaping @Sendable (Element) -> Result
  ) -> ReadOnlyObservableArray<Result> {
    DerivedArray<Result>.make(from: self) { change in
      change.elements.map(transform)
    } step: { derived, change in
      if change.isAppendOnly {
        return derived.publishAppending(change.insertions.map { transform(change.elements[$0]) })
      }
      let previous = derived.elements
      let origins = change.origins()
      let updated = change.updatedFlags()
      var mapped: [Result] = []
      mapped.reserveCapacity(change.elements.count)
      for (new, origin) in origins.enumerated() {
        mapped.append(
          origin >= 0 && !updated[new] ? previous[origin] : transform(change.elements[new]))
      }
      derived.publish(change.withElements(ArraySnapshot(mapped)))
    }
  }

  /// Returns a read-only array of the elements that satisfy `isIncluded`, kept up to date change
  /// by change.
  ///
  /// `isIncluded` runs only for inserted and updated elements; an element keeps its membership
  /// until it is updated, when it may enter (an insertion) or leave (a removal) the filtered
  /// array. A change of this array that changes nothing in the filtered one delivers nothing.
  ///
  /// ```swift
  /// let open = todos.filter { !$0.isDone }
  /// ```
  ///
  /// Threading and lifetime are those of ``map(_:)``.
  ///
  /// - Parameter isIncluded: Whether an element belongs to the filtered array.
  /// - Returns: The filtered array.
  /// - Complexity: An append costs O(1) plus `isIncluded`; any other change O(*n* log *n*) plus
  ///   `isIncluded` for its inserted and updated elements.
  public func filter(
    _ isIncluded: @escaping @Sendable (Element) -> Bool
  ) -> ReadOnlyObservableArray<Element> {
    // Whether each element of this array is in the filtered one; only the step touches it.
    let membership = Membership()
    return DerivedArray<Element>.make(from: self) { change in
      membership.included = change.elements.map(isIncluded)
      return change.elements.indices.filter { membership.included[$0] }.map {
        change.elements[$0]
      }
    } step: { derived, change in
      if change.isAppendOnly {
        var added: [Element] = []
        for new in change.insertions {
          let element = change.elements[new]
          let include = isIncluded(element)
          membership.included.append(include)
          if include { added.append(element) }
        }
        if !added.isEmpty { derived.publishAppending(added) }
        return
      }
      let filtered = Self.filtered(change, membership: membership, isIncluded: isIncluded)
      if !filtered.isEmpty || filtered.isReset { derived.publish(filtered) }
    }
  }

  /// The filtered array's change for this array's `change`, given which elements were in the
  /// filtered array before it; updates `membership`. Shared by `filter(_:)` and `filter(by:_:)`.
  static func filtered(
    _ change: ArrayChangeSet<Element>, membership: Membership,
    isIncluded: (Element) -> Bool
  ) -> ArrayChangeSet<Element> {
    let wasIncluded = membership.included
    // filteredOffset[i]: the offset in the filtered array of this array's old element i.
    var filteredOffset = [Int](repeating: -1, count: wasIncluded.count)
    var oldCount = 0
    for (old, included) in wasIncluded.enumerated() where included {
      filteredOffset[old] = oldCount
      oldCount += 1
    }
    let origins = change.origins()
    let updated = change.updatedFlags()
    var included = [Bool](repeating: false, count: origins.count)
    var elements: [Element] = []
    var filteredOrigins: [Int] = []
    var filteredUpdated: [Bool] = []
    for (new, origin) in origins.enumerated() {
      let element = change.elements[new]
      included[new] = origin < 0 || updated[new] ? isIncluded(element) : wasIncluded[origin]
      guard included[new] else { continue }
      elements.append(element)
      let filteredOrigin = origin >= 0 ? filteredOffset[origin] : -1
      filteredOrigins.append(filteredOrigin)
      filteredUpdated.append(filteredOrigin >= 0 && updated[new])
    }
    membership.included = included
    let snapshot = ArraySnapshot(elements)
    guard !change.isReset else { return .reset(from: oldCount, to: snapshot) }
    return .build(
      elements: snapshot, origins: filteredOrigins, updated: filteredUpdated, oldCount: oldCount)
  }
}

/// Which elements of a filter's source are in the filtered array.
final class Membership {
  var included: [Bool] = []
}
