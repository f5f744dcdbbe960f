/// The elements of an ``ObservableArray`` at one moment: an immutable, random-access view that
/// later changes of the array never alter.
///
/// Every ``ArrayChangeSet`` carries the snapshot taken right after its change, so an observer
/// that keeps a change set keeps exactly the elements it described, however the array changes
/// afterwards. Taking a snapshot copies nothing: it shares the array's storage. The array then
/// changes that storage in place only while no snapshot refers to it (it checks that its
/// reference is the only one), so an edit costs O(1) plus the moves `Array` would make, and
/// appending stays O(1) even while snapshots live: it writes past every snapshot's elements.
/// Any other change made while a snapshot (kept by an observer, or from ``ReadOnlyObservableArray/elements``)
/// still refers to the storage first copies it, in one block copy, and leaves the snapshot the
/// old storage.
///
/// ```swift
/// let todos = ObservableArray(["Milk", "Eggs"])
/// let before = todos.elements
/// todos.append("Bread")
/// print(Array(before))  // ["Milk", "Eggs"]
/// ```
public struct ArraySnapshot<Element>: RandomAccessCollection {
  /// The shared storage; this snapshot reads its first `count` elements, which never change
  /// while any snapshot refers to the storage (see `ElementBuffer`).
  @usableFromInline let buffer: ElementBuffer<Element>
  /// The number of elements.
  public let count: Int

  init(buffer: ElementBuffer<Element>, count: Int) {
    self.buffer = buffer
    self.count = count
  }

  /// Creates a snapshot holding `elements`.
  ///
  /// - Parameter elements: The elements, in order.
  public init(_ elements: some Sequence<Element>) {
    let array = Array(elements)
    self.init(buffer: ElementBuffer(copying: array, capacity: array.count), count: array.count)
  }

  /// The position of the first element: always 0.
  public var startIndex: Int { 0 }

  /// The position one past the last element: ``count``.
  public var endIndex: Int { count }

  /// Calls `body` with the elements' contiguous storage: copying a snapshot into an `Array`
  /// (or any collection that asks for contiguous storage) is one block copy.
  ///
  /// - Parameter body: Reads the elements; the pointer is valid only during the call.
  /// - Returns: What `body` returns.
  public func withContiguousStorageIfAvailable<Result>(
    _ body: (UnsafeBufferPointer<Element>) throws -> Result
  ) rethrows -> Result? {
    try body(UnsafeBufferPointer(start: buffer.base, count: count))
  }

  /// Copies the elements into a new contiguous array in one block copy: what `Array(snapshot)`
  /// calls, instead of walking the snapshot element by element.
  ///
  /// - Returns: The elements, in order.
  public func _copyToContiguousArray() -> ContiguousArray<Element> {
    // Not for an empty snapshot: the standard library would write the count into the empty
    // array singleton that every thread shares (a race ThreadSanitizer reports).
    guard count > 0 else { return [] }
    return ContiguousArray(unsafeUninitializedCapacity: count) { target, initialized in
      if let start = target.baseAddress {
        start.initialize(from: buffer.base, count: count)
      }
      initialized = count
    }
  }

  /// The element at `position`.
  ///
  /// - Parameter position: An offset in `0..<count`; any other traps with "Index out of range".
  public subscript(position: Int) -> Element {
    require(position >= 0 && position < count, "Index out of range")
    return buffer.base[position]
  }
}

extension ArraySnapshot: Equatable where Element: Equatable {
  /// Whether both snapshots hold equal elements in the same order.
  ///
  /// - Parameters:
  ///   - lhs: A snapshot.
  ///   - rhs: Another snapshot.
  /// - Returns: `true` when the counts match and the elements are pairwise equal.
  public static func == (lhs: ArraySnapshot, rhs: ArraySnapshot) -> Bool {
    lhs.elementsEqual(rhs)
  }
}

extension ArraySnapshot: CustomStringConvertible {
  /// The elements, printed like an array: `["Milk", "Eggs"]`.
  public var description: String {
    Array(self).description
  }
}

// The elements a snapshot reads are written once, before the snapshot exists, and never again
// while it refers to them (`ElementBuffer`'s invariant, kept under the owning array's lock), so
// reading them from any thread is safe when the elements themselves are Sendable.
extension ArraySnapshot: @unchecked Sendable where Element: Sendable {}

/// Storage that snapshots share: a fixed-capacity block whose first `initialized` slots hold
/// elements.
///
/// Invariant: a slot a snapshot reads (below its count) is never written while the snapshot
/// exists. The owning array writes initialized slots only while its own reference is the only
/// one (`ElementStorage` checks with `isKnownUniquelyReferenced` under its lock; no snapshot then
/// exists, and new ones are made only under that lock); otherwise it only appends past
/// `initialized`, which no snapshot can see (a snapshot's count is at most `initialized` when it
/// is taken), or it makes a new buffer. So snapshots never observe a write, and need no lock.
/// `initialized` is written only by the array that owns the buffer, under its lock, and read
/// only by it and by `deinit` (when nothing refers to the buffer any more).
@usableFromInline
final class ElementBuffer<Element> {
  @usableFromInline let base: UnsafeMutablePointer<Element>
  let capacity: Int
  private(set) var initialized = 0

  /// A buffer holding a copy of `elements`, with room for `capacity` elements in all.
  init(copying elements: some Collection<Element>, capacity: Int) {
    self.capacity = Swift.max(capacity, elements.count, 1)
    base = .allocate(capacity: self.capacity)
    let copied = elements.withContiguousStorageIfAvailable { source in
      // One block copy (a memcpy for trivial elements) instead of a generic loop.
      if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
      return source.count
    }
    if let copied {
      initialized = copied
      return
    }
    var slot = base
    for element in elements {
      slot.initialize(to: element)
      slot += 1
    }
    initialized = elements.count
  }

  /// A buffer with room for `capacity` elements that takes over every element of `source`,
  /// which the caller holds the only reference to and which is left empty: one block move.
  init(moving source: ElementBuffer, capacity: Int) {
    self.capacity = Swift.max(capacity, source.initialized, 1)
    base = .allocate(capacity: self.capacity)
    base.moveInitialize(from: source.base, count: source.initialized)
    initialized = source.initialized
    source.initialized = 0
  }

  deinit {
    base.deinitialize(count: initialized)
    base.deallocate()
  }

  /// Whether `append(_:)` may write the next slot after `count` elements.
  func canAppend(after count: Int) -> Bool {
    count == initialized && count < capacity
  }

  /// Initializes the next slot; the caller checked ``canAppend(after:)``.
  func append(_ element: Element) {
    (base + initialized).initialize(to: element)
    initialized += 1
  }

  // MARK: - In place, with the only reference (see the invariant above)

  /// Replaces the element at `index`, returning the old one for the caller to release after
  /// unlocking (its deinit may be user code).
  func exchange(at index: Int, with element: Element) -> Element {
    let old = (base + index).move()
    (base + index).initialize(to: element)
    return old
  }

  /// Inserts `elements` at `index`, moving the later elements up in one block move; the caller
  /// made room for them.
  func insert(contentsOf elements: [Element], at index: Int) {
    let added = elements.count
    (base + index + added).moveInitialize(from: base + index, count: initialized - index)
    elements.withUnsafeBufferPointer { source in
      if let start = source.baseAddress { (base + index).initialize(from: start, count: added) }
    }
    initialized += added
  }

  /// Removes the element at `index`, moving the later elements down in one block move, and
  /// returns it for the caller to release after unlocking.
  func remove(at index: Int) -> Element {
    let removed = (base + index).move()
    (base + index).moveInitialize(from: base + index + 1, count: initialized - index - 1)
    initialized -= 1
    return removed
  }

  /// Removes the elements in `bounds`, moving the later elements down in one block move, and
  /// returns them for the caller to release after unlocking.
  func remove(_ bounds: Range<Int>) -> [Element] {
    // An empty range removes nothing, and must not make an array of capacity 0 this way (see
    // `_copyToContiguousArray()`).
    guard !bounds.isEmpty else { return [] }
    let removed = [Element](unsafeUninitializedCapacity: bounds.count) { target, count in
      if let start = target.baseAddress {
        start.moveInitialize(from: base + bounds.lowerBound, count: bounds.count)
      }
      count = bounds.count
    }
    (base + bounds.lowerBound).moveInitialize(
      from: base + bounds.upperBound, count: initialized - bounds.upperBound)
    initialized -= bounds.count
    return removed
  }

  /// Moves the element at `source` to `destination`, shifting the ones between by one.
  func move(from source: Int, to destination: Int) {
    guard source != destination else { return }
    let element = (base + source).move()
    if source < destination {
      (base + source).moveInitialize(from: base + source + 1, count: destination - source)
    } else {
      (base + destination + 1).moveInitialize(from: base + destination, count: source - destination)
    }
    (base + destination).initialize(to: element)
  }
}
