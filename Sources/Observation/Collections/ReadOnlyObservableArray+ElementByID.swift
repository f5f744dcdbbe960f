extension ReadOnlyObservableArray where Element: Identifiable {
  /// Returns an observable of the element whose id is `id`, which follows it through the
  /// array's changes until it is removed.
  ///
  /// Its value is the element, and it delivers each update of the element (a set, a `refresh`,
  /// a diff that updates it), wherever it moves; moves alone and changes of other elements
  /// deliver nothing. With duplicate ids it follows the first element with `id` at the time of
  /// the call.
  ///
  /// ```swift
  /// let milk = todos.element(withID: 1)
  /// let token = milk.observe(options: [.initial, .new]) { todo, _ in
  ///   print(todo?.title ?? "removed")
  /// }
  /// ```
  ///
  /// **It ends when the element is removed**: it delivers `nil` once, then stops following the
  /// array and never delivers again, even if an element with the same id is inserted later
  /// (call `element(withID:)` again to follow that one). It also ends when the element's slot is
  /// updated with an element of another id. Its value is `nil` from the start when no element
  /// has `id`. A reset (``ArrayChangeSet/isReset``) looks the id up again: the element is
  /// delivered if it is still there, and the observable ends otherwise.
  ///
  /// It updates inside the round that delivers the array's change set, like ``map(_:)``; it
  /// keeps the array alive and lives as long as its users hold it.
  ///
  /// - Parameter id: The id of the element to follow.
  /// - Returns: An observable of the element, `nil` once it has ended.
  /// - Complexity: O(*n*) to find the element; then O(*k*) per change set with *k* insertions
  ///   and moves, however large the array.
  public func element(withID id: Element.ID) -> ReadOnlyObservable<Element?> {
    ElementByID.make(following: id, in: self)
  }
}
