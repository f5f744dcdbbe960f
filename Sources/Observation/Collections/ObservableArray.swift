/// An array whose observers receive each change as an ``ArrayChangeSet``: removals,
/// insertions, moves and updates, with a snapshot of the elements after it.
///
/// Mutate it with `Array`'s names; several mutations made in ``edit(_:)`` (or in a
/// `withObservationTransaction { }`) are delivered as one change set:
///
/// ```swift
/// let todos = ObservableArray(["Milk", "Eggs"])
/// let token = todos.observe(options: [.initial, .new]) { changes in
///   print(changes)
/// }
/// // reset +[0, 1]
/// todos.append("Bread")                   // +[2]
/// todos.move(from: 2, to: 0)              // ↷[2→0]
/// todos[1] = "Oat milk"                   // ~[1→1]
/// todos.edit { $0.remove(at: 0); $0.append("Tea") }  // -[0] +[2]
/// ```
///
/// Each mutation checks its arguments as `Array` does, with the same message
/// ("Index out of range", "Array index is out of range", …), before anything changes; the
/// message is printed in optimised builds too.
///
/// An edit costs O(1) plus the element moves `Array` would make, and one round of delivery,
/// while no observer keeps an earlier change set (or ``ReadOnlyObservableArray/elements``
/// snapshot): the array changes its storage in place. While one does, the edit first copies the
/// storage, in one block copy, so the kept snapshot never changes. Appending is O(1) either way.
///
/// Ordering, threads and observers are those of ``ReadOnlyObservableArray``. Expose the array as a
/// ``ReadOnlyObservableArray`` to let others observe it but not modify it.
public final class ObservableArray<Element>: ReadOnlyObservableArray<Element> {
  /// Creates an array holding `elements`.
  ///
  /// - Parameter elements: The initial elements.
  public init(_ elements: some Sequence<Element>) {
    super.init(initialElements: Array(elements))
  }

  /// Creates an empty array.
  public init() {
    super.init(initialElements: [])
  }

  /// The element at `index`; setting it replaces the element and delivers an update.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  public subscript(index: Int) -> Element {
    get {
      let snapshot = elements
      require(index >= 0 && index < snapshot.count, "Index out of range")
      return snapshot[index]
    }
    set {
      lock.lock()
      guard index >= 0 && index < storage.count else {
        lock.unlock()
        requirementFailed("Index out of range")
      }
      let (old, retired) = storage.edit(inPlace: mayEditInPlaceLocked()) {
        $0.exchange(at: index, with: newValue)
      }
      publishLocked(updating: index)
      withExtendedLifetime((old, retired)) {}
    }
  }

  /// Reserves room for at least `minimumCapacity` elements, so that appending up to that many
  /// does not grow the storage. Delivers nothing: the elements do not change.
  ///
  /// - Parameter minimumCapacity: The number of elements to make room for.
  /// - Complexity: O(*n*) when it grows the storage, O(1) otherwise.
  public func reserveCapacity(_ minimumCapacity: Int) {
    lock.lock()
    let retired = storage.reserveCapacity(minimumCapacity)
    lock.unlock()
    withExtendedLifetime(retired) {}
  }

  /// Appends `element`.
  ///
  /// - Parameter element: The element to add at the end.
  /// - Complexity: Amortized O(1), also while observers hold earlier snapshots.
  public func append(_ element: Element) {
    lock.lock()
    _ = mayEditInPlaceLocked()
    let retired = storage.append(element)
    let change = ArrayChangeSet(
      elements: storage.snapshot, removals: [], insertions: [storage.count - 1], moves: [],
      updates: [])
    publishLocked(change)
    withExtendedLifetime(retired) {}
  }

  /// Appends `newElements`, as one change set.
  ///
  /// - Parameter newElements: The elements to add at the end, in order.
  public func append(contentsOf newElements: some Sequence<Element>) {
    let newElements = Array(newElements)
    lock.lock()
    _ = mayEditInPlaceLocked()
    let start = storage.count
    var retired: [ElementBuffer<Element>] = []
    for element in newElements {
      if let old = storage.append(element) { retired.append(old) }
    }
    let change = ArrayChangeSet(
      elements: storage.snapshot, removals: [], insertions: Array(start..<storage.count), moves: [],
      updates: [])
    publishLocked(change)
    withExtendedLifetime(retired) {}
  }

  /// Inserts `element` at `index`.
  ///
  /// - Parameters:
  ///   - element: The element to insert.
  ///   - index: An offset in `0...count`; any other traps with "Array index is out of range".
  /// - Complexity: O(*n* - `index`) element moves (one block move) while no observer keeps an
  ///   earlier snapshot; one block copy of the elements more while one does.
  public func insert(_ element: Element, at index: Int) {
    insert(contentsOf: CollectionOfOne(element), at: index, message: "Array index is out of range")
  }

  /// Inserts `newElements` at `index`, as one change set.
  ///
  /// - Parameters:
  ///   - newElements: The elements to insert, in order.
  ///   - index: An offset in `0...count`; any other traps with "Array replace: subrange extends
  ///     past the end" (or "… start is negative").
  /// - Complexity: O(*n* + *m*) element moves, in block moves; see ``insert(_:at:)``.
  public func insert(contentsOf newElements: some Collection<Element>, at index: Int) {
    insert(contentsOf: newElements, at: index, message: nil)
  }

  private func insert(
    contentsOf newElements: some Collection<Element>, at index: Int, message: String?
  ) {
    let newElements = Array(newElements)
    lock.lock()
    let count = storage.count
    let isValid = index >= 0 && index <= count
    guard isValid else {
      lock.unlock()
      Self.checkInsertion(at: index, count: count, message: message)
      requirementFailed("Array index is out of range")
    }
    let (_, retired) = storage.edit(room: newElements.count, inPlace: mayEditInPlaceLocked()) {
      $0.insert(contentsOf: newElements, at: index)
    }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [],
        insertions: Array(index..<index + newElements.count), moves: [], updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Removes and returns the element at `index`.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  /// - Returns: The removed element.
  /// - Complexity: O(*n* - `index`) element moves (one block move) while no observer keeps an
  ///   earlier snapshot; one block copy of the elements more while one does.
  @discardableResult
  public func remove(at index: Int) -> Element {
    lock.lock()
    guard index >= 0 && index < storage.count else {
      lock.unlock()
      requirementFailed("Index out of range")
    }
    let (removed, retired) = storage.edit(inPlace: mayEditInPlaceLocked()) {
      $0.remove(at: index)
    }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [index], insertions: [], moves: [], updates: []))
    withExtendedLifetime(retired) {}
    return removed
  }

  /// Removes the elements in `bounds`, as one change set.
  ///
  /// - Parameter bounds: A range of offsets within `0...count`; any other traps with "Array
  ///   replace: subrange extends past the end" (or "… start is negative").
  /// - Complexity: O(*n*) element moves, in block moves; see ``remove(at:)``.
  public func removeSubrange(_ bounds: Range<Int>) {
    lock.lock()
    let count = storage.count
    guard bounds.lowerBound >= 0 && bounds.upperBound <= count else {
      lock.unlock()
      Self.checkSubrange(bounds, count: count)
      requirementFailed("Array replace: subrange extends past the end")
    }
    let (removed, retired) = storage.edit(inPlace: mayEditInPlaceLocked()) { $0.remove(bounds) }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: Array(bounds), insertions: [], moves: [],
        updates: []))
    withExtendedLifetime((removed, retired)) {}
  }

  /// Removes every element, as one change set of removals (not a reset: see ``reset(to:)``).
  public func removeAll() {
    lock.lock()
    _ = mayEditInPlaceLocked()
    let oldCount = storage.count
    let retired = storage.replace(with: [])
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: Array(0..<oldCount), insertions: [], moves: [],
        updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Moves the element at `source` so that it ends up at `destination`.
  ///
  /// Equivalent to `insert(remove(at: source), at: destination)`, delivered as one move.
  /// When `source == destination` (a valid offset) nothing changes and nothing is delivered:
  /// no change set, no round.
  ///
  /// - Parameters:
  ///   - source: The element's offset now, in `0..<count`.
  ///   - destination: Its offset afterwards, in `0..<count`.
  ///   Any other offset traps with "Index out of range".
  /// - Complexity: O(|`source` - `destination`|) element moves (one block move) while no
  ///   observer keeps an earlier snapshot; one block copy of the elements more while one does.
  public func move(from source: Int, to destination: Int) {
    lock.lock()
    let count = storage.count
    guard source >= 0 && source < count && destination >= 0 && destination < count else {
      lock.unlock()
      requirementFailed("Index out of range")
    }
    guard source != destination else { return lock.unlock() }
    let (_, retired) = storage.edit(inPlace: mayEditInPlaceLocked()) {
      $0.move(from: source, to: destination)
    }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [], insertions: [],
        moves: [ArrayChangeSet<Element>.Match(old: source, new: destination)], updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Reports the element at `index` as updated without replacing it: for an element whose
  /// content changed inside (a reference type), or that a view should redraw.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  public func refresh(at index: Int) {
    lock.lock()
    guard index >= 0 && index < storage.count else {
      lock.unlock()
      requirementFailed("Index out of range")
    }
    _ = mayEditInPlaceLocked()
    publishLocked(updating: index)
  }

  // MARK: - Helpers

  private func publishLocked(updating index: Int) {
    let match = ArrayChangeSet<Element>.Match(old: index, new: index)
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [], insertions: [], moves: [], updates: [match]))
  }

  /// Stops with `Array`'s message unless `index` is a valid insertion offset; called without
  /// the lock.
  static func checkInsertion(at index: Int, count: Int, message: String?) {
    if let message {
      require(index >= 0 && index <= count, message)
    } else {
      checkSubrange(index..<index, count: count)
    }
  }

  /// Stops with `Array`'s message unless `bounds` lies within `0...count`; called without the
  /// lock.
  static func checkSubrange(_ bounds: Range<Int>, count: Int) {
    require(bounds.lowerBound >= 0, "Array replace: subrange start is negative")
    require(bounds.upperBound <= count, "Array replace: subrange extends past the end")
  }
}

// All state lives in `ReadOnlyObservableArray`, guarded by its lock.
extension ObservableArray: @unchecked Sendable where Element: Sendable {}
