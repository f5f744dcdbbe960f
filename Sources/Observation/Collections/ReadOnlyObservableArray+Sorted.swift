extension ReadOnlyObservableArray {
  /// Returns a read-only array of this array's elements sorted by `areInIncreasingOrder`, kept
  /// sorted change by change.
  ///
  /// The sorted array is maintained incrementally: an inserted element is placed by a binary
  /// search; a removed one is removed; an updated element whose sort key changed moves (a move
  /// and an update in the change set), and one that still fits where it is stays (an update). A
  /// move in this array changes nothing in the sorted one and delivers nothing.
  ///
  /// ```swift
  /// let byTitle = todos.sorted { $0.title < $1.title }
  /// todos.append(Todo(id: 9, title: "Apples"))  // byTitle: +[0]
  /// ```
  ///
  /// `areInIncreasingOrder` must be a strict weak ordering, as for `Array.sorted(by:)`. The
  /// first elements are sorted stably; later, an element that enters the sorted array (inserted,
  /// or updated so that it moves) goes after the elements equal to it.
  ///
  /// Threading and lifetime are those of ``map(_:)``: the sorted array changes inside the round
  /// that delivers this array's change set, and `areInIncreasingOrder` is never called
  /// concurrently with itself, nor with a lock held.
  ///
  /// - Parameter areInIncreasingOrder: Whether its first argument belongs before its second.
  /// - Returns: The sorted array.
  /// - Complexity: O(*k* log *n*) comparisons per change that inserts or updates *k* elements
  ///   of *n* (the first sort: O(*n* log *n*)). Besides the comparisons, a change costs O(*n*)
  ///   to publish the new elements, as for ``filter(_:)``, and O(*m* log *m*) when it moves *m*
  ///   elements (the minimal moves).
  public func sorted(
    by areInIncreasingOrder: @escaping @Sendable (Element, Element) -> Bool
  ) -> ReadOnlyObservableArray<Element> {
    let order = SortedOrder<Element>(areInIncreasingOrder)
    return DerivedArray<Element>.make(from: self) { change in
      order.seed(change.elements)
    } step: { derived, change in
      if let sorted = order.step(change, sorted: derived.elements) { derived.publish(sorted) }
    }
  }
}
