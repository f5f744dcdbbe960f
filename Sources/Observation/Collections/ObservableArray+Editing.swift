extension ObservableArray {
  /// Applies several mutations as one change set.
  ///
  /// `body` edits a working copy (an ``ArrayEditor``) without any lock held, so it may read
  /// this and other observables. If another thread changes the array while `body` runs, the
  /// edit is discarded and `body` runs again on the newer elements; keep it free of side
  /// effects. When it returns, the edited elements replace the array's and one change set
  /// describes the whole edit (an empty one when nothing changed).
  ///
  /// ```swift
  /// todos.edit { todos in
  ///   todos.removeAll()
  ///   todos.append(contentsOf: loaded)
  /// }
  /// ```
  ///
  /// - Parameter body: Edits the working copy. Errors it throws propagate, and the array is
  ///   then left unchanged.
  /// - Returns: What `body` returns.
  /// - Complexity: O(*n* log *n*) beyond `body`'s own work, with one block copy of the elements
  ///   into the working copy and one back; an edit that changes nothing copies them only once.
  @discardableResult
  public func edit<Result>(_ body: (inout ArrayEditor<Element>) throws -> Result) rethrows
    -> Result
  {
    while true {
      let (snapshot, seen) = read()
      var editor = ArrayEditor(snapshot)
      let result = try body(&editor)
      let edited = editor.isModified ? ArraySnapshot(editor.elements) : snapshot
      let change = ArrayChangeSet<Element>.build(
        elements: edited, origins: editor.origins, updated: editor.updated,
        oldCount: snapshot.count)
      if commit(edited, change, ifVersion: seen) { return result }
    }
  }

  /// Replaces the elements with `newElements` as a reset: one change set that removes every
  /// element and inserts every new one (``ArrayChangeSet/isReset``), for when relating old
  /// and new elements is not wanted. A table view bound with `bind(to:reloadThreshold:)` reloads.
  ///
  /// - Parameter newElements: The new elements.
  public func reset(to newElements: some Sequence<Element>) {
    let snapshot = ArraySnapshot(newElements)
    lock.lock()
    _ = mayEditInPlaceLocked()
    let change = ArrayChangeSet<Element>.reset(from: storage.count, to: snapshot)
    let retired = storage.adopt(snapshot)
    publishLocked(change)
    withExtendedLifetime(retired) {}
  }

  /// Replaces the elements with `newElements`, delivering the difference found by matching ids.
  ///
  /// Equal ids match (the *k*-th occurrence of a duplicated id matches its *k*-th occurrence;
  /// duplicates never trap); a matched element for which `isUpdated` returns `true` is an
  /// update. The moves are minimal. Like ``edit(_:)``, the diff runs without the lock and runs
  /// again if another thread changes the array meanwhile.
  ///
  /// ```swift
  /// todos.replace(with: loaded, id: \.title, isUpdated: { $0.isDone != $1.isDone })
  /// ```
  ///
  /// - Parameters:
  ///   - newElements: The new elements.
  ///   - id: An element's identity.
  ///   - isUpdated: Whether a matched element changed, given its old and new value.
  /// - Complexity: O(*n* + *m* log *m*) for *n* elements and *m* matched ones; see
  ///   ``ArrayChangeSet/difference(from:to:id:isUpdated:)``.
  @inlinable
  public func replace<ID: Hashable>(
    with newElements: some Sequence<Element>,
    id: (Element) throws -> ID,
    isUpdated: (Element, Element) throws -> Bool
  ) rethrows {
    let replacement = ArraySnapshot(newElements)
    while true {
      let (snapshot, seen) = read()
      let change = try ArrayChangeSet<Element>.difference(
        from: snapshot, to: replacement, id: id, isUpdated: isUpdated)
      if commit(replacement, change, ifVersion: seen) { return }
    }
  }

  @usableFromInline
  func read() -> (ArraySnapshot<Element>, UInt) {
    lock.lock()
    defer { lock.unlock() }
    return (storage.snapshot, version)
  }

  /// Makes `elements` the array's elements and publishes `change`, unless the array changed
  /// since `expected`.
  @usableFromInline
  func commit(
    _ elements: ArraySnapshot<Element>, _ change: ArrayChangeSet<Element>, ifVersion expected: UInt
  ) -> Bool {
    lock.lock()
    guard version == expected else {
      lock.unlock()
      return false
    }
    _ = mayEditInPlaceLocked()
    let retired = storage.adopt(elements)
    publishLocked(change)
    withExtendedLifetime(retired) {}
    return true
  }
}

extension ObservableArray where Element: Identifiable & Equatable {
  /// Replaces the elements with `newElements`, delivering the difference found by matching
  /// `id`s; a matched element that is not equal to its old value is an update.
  ///
  /// ```swift
  /// todos.replace(with: loaded)
  /// ```
  ///
  /// See ``replace(with:id:isUpdated:)`` for duplicates, moves and threads.
  ///
  /// - Parameter newElements: The new elements.
  @inlinable
  public func replace(with newElements: some Sequence<Element>) {
    replace(with: newElements, id: { $0.id }, isUpdated: !=)
  }
}
