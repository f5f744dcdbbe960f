/// The elements of an ``ObservableArray`` at one moment: an immutable, random-access view that
/// later changes of the array never alter.
///
/// Every ``ArrayChangeSet`` carries the snapshot taken right after its change, so an observer
/// that keeps a change set keeps exactly the elements it described, however the array changes
/// afterwards. Taking a snapshot copies nothing: snapshots share the array's storage, and the
/// array appends into space no snapshot can see, so appending stays O(1) while snapshots live.
/// Any other change of the array copies its storage first when a snapshot still refers to it.
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

  /// The element at `position`.
  ///
  /// - Parameter position: An offset in `0..<count`; any other traps with "Index out of range".
  public subscript(position: Int) -> Element {
    precondition(position >= 0 && position < count, "Index out of range")
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
/// Invariant: an initialized slot is never written again. The live storage of an array only
/// ever appends past `initialized` (no snapshot can see those slots: a snapshot's count is at
/// most `initialized` when it is taken); every other change makes a new buffer. So snapshots
/// never observe a write, and need no lock. `initialized` is written only by the array that owns
/// the buffer, under its lock, and read only by it and by `deinit` (when nothing refers to the
/// buffer any more).
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
}
