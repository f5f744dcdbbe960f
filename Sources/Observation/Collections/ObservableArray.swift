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
/// todos[1] = "Oat milk"                   // ~[0→1]
/// todos.edit { $0.remove(at: 0); $0.append("Tea") }  // -[0] +[2]
/// ```
///
/// Each mutation checks its arguments as `Array` does, with the same message
/// ("Index out of range", "Array index is out of range", …), before anything changes.
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
      precondition(index >= 0 && index < snapshot.count, "Index out of range")
      return snapshot[index]
    }
    set {
      lock.lock()
      precondition(index >= 0 && index < storage.count, "Index out of range")
      let retired = rebuildLocked { $0[index] = newValue }
      publishLocked(updating: index)
      withExtendedLifetime(retired) {}
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
  /// - Complexity: O(*n*).
  public func insert(_ element: Element, at index: Int) {
    insert(contentsOf: CollectionOfOne(element), at: index, message: "Array index is out of range")
  }

  /// Inserts `newElements` at `index`, as one change set.
  ///
  /// - Parameters:
  ///   - newElements: The elements to insert, in order.
  ///   - index: An offset in `0...count`; any other traps with "Array replace: subrange extends
  ///     past the end" (or "… start is negative").
  /// - Complexity: O(*n* + *m*).
  public func insert(contentsOf newElements: some Collection<Element>, at index: Int) {
    insert(contentsOf: newElements, at: index, message: nil)
  }

  private func insert(
    contentsOf newElements: some Collection<Element>, at index: Int, message: String?
  ) {
    let newElements = Array(newElements)
    lock.lock()
    Self.checkInsertion(at: index, count: storage.count, message: message)
    let retired = rebuildLocked { $0.insert(contentsOf: newElements, at: index) }
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
  /// - Complexity: O(*n*).
  @discardableResult
  public func remove(at index: Int) -> Element {
    lock.lock()
    precondition(index >= 0 && index < storage.count, "Index out of range")
    let removed = storage.snapshot[index]
    let retired = rebuildLocked { $0.remove(at: index) }
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
  /// - Complexity: O(*n*).
  public func removeSubrange(_ bounds: Range<Int>) {
    lock.lock()
    Self.checkSubrange(bounds, count: storage.count)
    let retired = rebuildLocked { $0.removeSubrange(bounds) }
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: Array(bounds), insertions: [], moves: [],
        updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Removes every element, as one change set of removals (not a reset: see ``reset(to:)``).
  public func removeAll() {
    lock.lock()
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
  /// Equivalent to `insert(remove(at: source), at: destination)`, delivered as one move
  /// (nothing when `source == destination`).
  ///
  /// - Parameters:
  ///   - source: The element's offset now, in `0..<count`.
  ///   - destination: Its offset afterwards, in `0..<count`.
  ///   Any other offset traps with "Index out of range".
  /// - Complexity: O(*n*).
  public func move(from source: Int, to destination: Int) {
    lock.lock()
    precondition(source >= 0 && source < storage.count, "Index out of range")
    precondition(destination >= 0 && destination < storage.count, "Index out of range")
    let retired = rebuildLocked { $0.insert($0.remove(at: source), at: destination) }
    let moves =
      source == destination ? [] : [ArrayChangeSet<Element>.Match(old: source, new: destination)]
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [], insertions: [], moves: moves, updates: []))
    withExtendedLifetime(retired) {}
  }

  /// Reports the element at `index` as updated without replacing it: for an element whose
  /// content changed inside (a reference type), or that a view should redraw.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  public func refresh(at index: Int) {
    lock.lock()
    precondition(index >= 0 && index < storage.count, "Index out of range")
    publishLocked(updating: index)
  }

  // MARK: - Helpers

  /// Replaces the storage with a changed copy of it; returns the old buffer for the caller to
  /// release after unlocking.
  private func rebuildLocked(_ change: (inout [Element]) -> Void) -> ElementBuffer<Element> {
    var array = Array(storage.snapshot)
    change(&array)
    return storage.replace(with: array)
  }

  private func publishLocked(updating index: Int) {
    let match = ArrayChangeSet<Element>.Match(old: index, new: index)
    publishLocked(
      ArrayChangeSet(
        elements: storage.snapshot, removals: [], insertions: [], moves: [], updates: [match]))
  }

  static func checkInsertion(at index: Int, count: Int, message: String?) {
    if let message {
      precondition(index >= 0 && index <= count, message)
    } else {
      checkSubrange(index..<index, count: count)
    }
  }

  static func checkSubrange(_ bounds: Range<Int>, count: Int) {
    precondition(bounds.lowerBound >= 0, "Array replace: subrange start is negative")
    precondition(bounds.upperBound <= count, "Array replace: subrange extends past the end")
  }
}

// All state lives in `ReadOnlyObservableArray`, guarded by its lock.
extension ObservableArray: @unchecked Sendable where Element: Sendable {}
