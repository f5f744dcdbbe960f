/// A working copy of an ``ObservableArray``'s elements that records what a batch of mutations
/// changes, for ``ObservableArray/edit(_:)``.
///
/// It has `Array`'s mutations, which check their arguments as `Array` does; when the edit ends,
/// the array delivers everything it did as one ``ArrayChangeSet``, with minimal moves:
///
/// ```swift
/// todos.edit { todos in
///   todos.remove(at: 0)
///   todos.append(Todo(id: 7, title: "Tea"))
///   todos[0].isDone = true
/// }
/// ```
public struct ArrayEditor<Element> {
  /// The elements as edited so far.
  public private(set) var elements: [Element]
  /// For each element, its offset before the edit, or -1 if the edit inserted it.
  private(set) var origins: [Int]
  /// For each element, whether the edit updated it.
  private(set) var updated: [Bool]
  /// Whether any mutation was made; an edit without one keeps the array's storage.
  private(set) var isModified = false

  init(_ snapshot: ArraySnapshot<Element>) {
    elements = Array(snapshot)
    origins = Array(0..<snapshot.count)
    updated = [Bool](repeating: false, count: snapshot.count)
  }

  /// The number of elements.
  public var count: Int { elements.count }

  /// The element at `index`; setting it replaces the element and records an update.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  public subscript(index: Int) -> Element {
    get { elements[index] }
    set {
      elements[index] = newValue
      updated[index] = true
      isModified = true
    }
  }

  /// Appends `element`.
  ///
  /// - Parameter element: The element to add at the end.
  public mutating func append(_ element: Element) {
    isModified = true
    elements.append(element)
    origins.append(-1)
    updated.append(false)
  }

  /// Appends `newElements`.
  ///
  /// - Parameter newElements: The elements to add at the end, in order.
  public mutating func append(contentsOf newElements: some Sequence<Element>) {
    for element in newElements { append(element) }
  }

  /// Inserts `element` at `index`.
  ///
  /// - Parameters:
  ///   - element: The element to insert.
  ///   - index: An offset in `0...count`; any other traps with "Array index is out of range".
  public mutating func insert(_ element: Element, at index: Int) {
    isModified = true
    elements.insert(element, at: index)
    origins.insert(-1, at: index)
    updated.insert(false, at: index)
  }

  /// Inserts `newElements` at `index`.
  ///
  /// - Parameters:
  ///   - newElements: The elements to insert, in order.
  ///   - index: An offset in `0...count`.
  public mutating func insert(contentsOf newElements: some Collection<Element>, at index: Int) {
    isModified = true
    elements.insert(contentsOf: newElements, at: index)
    let added = elements.count - origins.count
    origins.insert(contentsOf: repeatElement(-1, count: added), at: index)
    updated.insert(contentsOf: repeatElement(false, count: added), at: index)
  }

  /// Removes and returns the element at `index`.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  /// - Returns: The removed element.
  @discardableResult
  public mutating func remove(at index: Int) -> Element {
    isModified = true
    let removed = elements.remove(at: index)
    origins.remove(at: index)
    updated.remove(at: index)
    return removed
  }

  /// Removes the elements in `bounds`.
  ///
  /// - Parameter bounds: A range of offsets within `0...count`.
  public mutating func removeSubrange(_ bounds: Range<Int>) {
    isModified = true
    elements.removeSubrange(bounds)
    origins.removeSubrange(bounds)
    updated.removeSubrange(bounds)
  }

  /// Removes every element.
  public mutating func removeAll() {
    isModified = true
    elements.removeAll()
    origins.removeAll()
    updated.removeAll()
  }

  /// Moves the element at `source` so that it ends up at `destination`.
  ///
  /// - Parameters:
  ///   - source: The element's offset now, in `0..<count`.
  ///   - destination: Its offset afterwards, in `0..<count`.
  ///   Any other offset traps with "Index out of range".
  public mutating func move(from source: Int, to destination: Int) {
    isModified = true
    require(source >= 0 && source < count, "Index out of range")
    require(destination >= 0 && destination < count, "Index out of range")
    elements.insert(elements.remove(at: source), at: destination)
    origins.insert(origins.remove(at: source), at: destination)
    updated.insert(updated.remove(at: source), at: destination)
  }

  /// Records the element at `index` as updated without replacing it.
  ///
  /// - Parameter index: An offset in `0..<count`; any other traps with "Index out of range".
  public mutating func refresh(at index: Int) {
    isModified = true
    updated[index] = true
  }
}

// Values only; `elements` is Sendable when `Element` is.
extension ArrayEditor: Sendable where Element: Sendable {}
