extension ReadOnlyObservableArray {
  /// Returns a read-only array of the elements that satisfy `isIncluded` for the current value
  /// of `query`, kept up to date as this array and the query change: a search field over a list.
  ///
  /// ```swift
  /// let searchText = Observable("")
  /// let results = todos.filter(by: searchText) { todo, text in
  ///   text.isEmpty || todo.title.lowercased().contains(text.lowercased())
  /// }
  /// searchText.value = "milk"  // results: the removals of the to-dos that do not match
  /// ```
  ///
  /// A change of this array is filtered as by ``filter(_:)``, with the current query. A new
  /// query re-tests every element and delivers the smallest change set: the elements that
  /// leave are removals, the ones that enter are insertions, and nothing moves (the filtered
  /// array keeps this array's order); a query that changes nothing delivers nothing.
  ///
  /// > Important: Change sets of this array and values of `query` are applied one at a time, in
  /// > the order they arrive. The filtered array changes inside the round that delivers them,
  /// > unless another thread is applying an earlier one: then that thread applies it, right
  /// > after. `isIncluded` is never called concurrently with itself, and no lock is held while
  /// > it runs.
  ///
  /// It keeps this array and `query` alive, and lives as long as its users hold it, like
  /// ``map(_:)``.
  ///
  /// - Parameters:
  ///   - query: The query, such as a search field's text.
  ///   - isIncluded: Whether an element belongs to the filtered array under a query.
  /// - Returns: The filtered array.
  /// - Complexity: A change of this array costs what it costs in ``filter(_:)``; a new query
  ///   O(*n*), with one call of `isIncluded` per element.
  public func filter<Query>(
    by query: ReadOnlyObservable<Query>,
    _ isIncluded: @escaping @Sendable (Element, Query) -> Bool
  ) -> ReadOnlyObservableArray<Element> {
    QueryFilter.make(from: self, by: query, isIncluded: isIncluded)
  }
}
