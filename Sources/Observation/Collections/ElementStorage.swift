/// The live elements of an observable array: a buffer and how many of its elements belong to the
/// array. Guarded by the owning array's lock.
///
/// Appending writes in place, past every snapshot's elements (see `ElementBuffer`). Any other
/// change goes through ``edit(room:inPlace:_:)``: in place while no snapshot refers to the
/// buffer, into a new buffer (one block copy) otherwise, so a snapshot taken earlier keeps what
/// it saw.
struct ElementStorage<Element> {
  private(set) var buffer: ElementBuffer<Element>
  private(set) var count: Int

  init(_ elements: some Collection<Element>, capacity: Int = 0) {
    buffer = ElementBuffer(copying: elements, capacity: capacity)
    count = elements.count
  }

  /// The elements now, sharing the storage.
  var snapshot: ArraySnapshot<Element> {
    ArraySnapshot(buffer: buffer, count: count)
  }

  /// Appends `element`, in place when there is room; otherwise into a buffer twice as large.
  ///
  /// - Returns: The buffer that was replaced, if any: the caller releases it after unlocking,
  ///   since releasing it may deinitialize elements (user code).
  mutating func append(_ element: Element) -> ElementBuffer<Element>? {
    var retired: ElementBuffer<Element>?
    if !buffer.canAppend(after: count) {
      retired = buffer
      buffer = ElementBuffer(copying: snapshot, capacity: Swift.max(16, count * 2))
    }
    buffer.append(element)
    count += 1
    return retired
  }

  /// Moves the elements into a buffer with room for `capacity` elements, unless the buffer has
  /// that room already.
  ///
  /// - Returns: The buffer that was replaced, if any; the caller releases it after unlocking.
  mutating func reserveCapacity(_ capacity: Int) -> ElementBuffer<Element>? {
    guard capacity > buffer.capacity else { return nil }
    let retired = buffer
    buffer = ElementBuffer(copying: snapshot, capacity: capacity)
    return retired
  }

  /// Replaces the elements with `elements`, in a new buffer.
  ///
  /// - Returns: The buffer that was replaced; the caller releases it after unlocking.
  mutating func replace(with elements: some Collection<Element>) -> ElementBuffer<Element> {
    let retired = buffer
    buffer = ElementBuffer(copying: elements, capacity: elements.count + elements.count / 2)
    count = elements.count
    return retired
  }
}

extension ElementStorage {
  /// Applies `body` to a buffer this storage alone refers to, with room for `extra` more
  /// elements, and takes the buffer's new count.
  ///
  /// The buffer is changed in place when nothing else refers to it (no snapshot of it lives:
  /// observers let their change sets go) and `inPlace` allows it; otherwise `body` runs on a
  /// copy, made in one block copy, and snapshots keep the old buffer.
  ///
  /// - Returns: What `body` returns, and the buffer that was replaced, if any: the caller
  ///   releases both after unlocking, since releasing them may deinitialize elements (user code).
  mutating func edit<Result>(
    room extra: Int = 0, inPlace: Bool, _ body: (ElementBuffer<Element>) -> Result
  ) -> (result: Result, retired: ElementBuffer<Element>?) {
    let needed = count + extra
    var retired: ElementBuffer<Element>?
    if inPlace && isKnownUniquelyReferenced(&buffer) && count == buffer.initialized {
      if needed > buffer.capacity {
        retired = buffer
        buffer = ElementBuffer(moving: buffer, capacity: Swift.max(needed, 2 * count, 16))
      }
    } else {
      retired = buffer
      buffer = ElementBuffer(
        copying: snapshot, capacity: Swift.max(needed, count + count / 2, 16))
    }
    let result = body(buffer)
    count = buffer.initialized
    return (result, retired)
  }

  /// Makes `snapshot`'s elements the live ones, sharing its buffer: appends write past them in
  /// place when the snapshot covers every element of its buffer, and copy it otherwise.
  ///
  /// - Returns: The buffer that was replaced; the caller releases it after unlocking.
  mutating func adopt(_ snapshot: ArraySnapshot<Element>) -> ElementBuffer<Element> {
    let retired = buffer
    buffer = snapshot.buffer
    count = snapshot.count
    return retired
  }
}
