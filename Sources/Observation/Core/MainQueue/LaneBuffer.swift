/// The waiting items of a ``MainQueueLane`` and their tags, oldest first, in memory the buffer
/// manages itself.
///
/// Not a pair of arrays: the lane's code is unspecialized, and there every call into a generic
/// `Array` method looks the array type's metadata up in the runtime's table, once per append on
/// the producer's thread. These pointers need only the value witnesses of `Item` and `Tag`,
/// which come with the lane.
///
/// Removing from the front advances a start index and moves nothing, so a turn that runs out of
/// frame budget in a backlog of a million values leaves the rest where it is.
///
/// Not thread-safe, and copies share memory: the lane owns each buffer, guards it with its lock
/// (or hands it to the one thread that drains), and calls ``deallocate()`` exactly once.
/// Nothing here releases an element except ``removeAll()`` and ``removeFirst(_:)``, which the
/// lane calls without its lock.
struct LaneBuffer<Item, Tag> {
  private var items: UnsafeMutablePointer<Item>
  private var tags: UnsafeMutablePointer<Tag>
  /// The index of the oldest element.
  private var start = 0
  /// The index after the newest element.
  private var end = 0
  private(set) var capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
    items = .allocate(capacity: capacity)
    tags = .allocate(capacity: capacity)
  }

  var count: Int { end - start }

  var isEmpty: Bool { start == end }

  /// The item at `index` from the oldest and its tag, valid until the buffer changes.
  @inline(__always)
  func element(at index: Int) -> (item: UnsafePointer<Item>, tag: UnsafePointer<Tag>) {
    (UnsafePointer(items + start + index), UnsafePointer(tags + start + index))
  }

  @inline(__always)
  mutating func append(_ item: consuming Item, _ tag: consuming Tag) {
    if end == capacity { reallocate(capacity: count * 2 > capacity ? capacity * 2 : capacity) }
    (items + end).initialize(to: item)
    (tags + end).initialize(to: tag)
    end += 1
  }

  /// Replaces the newest item and tag (the buffer is not empty), returning the item replaced,
  /// for the caller to release after unlocking.
  mutating func replaceLast(_ item: consuming Item, _ tag: consuming Tag) -> Item {
    let last = end - 1
    let replaced = (items + last).move()
    (items + last).initialize(to: item)
    (tags + last).pointee = tag
    return replaced
  }

  /// The newest tag; the buffer is not empty.
  var lastTag: Tag { tags[end - 1] }

  /// Releases the oldest `removed` elements.
  mutating func removeFirst(_ removed: Int) {
    (items + start).deinitialize(count: removed)
    (tags + start).deinitialize(count: removed)
    start += removed
    if start == end {
      start = 0
      end = 0
    }
  }

  /// Moves the oldest `moved` elements, in order, to the end of `other`.
  mutating func moveFirst(_ moved: Int, to other: inout LaneBuffer) {
    for index in start..<(start + moved) {
      other.append((items + index).move(), (tags + index).move())
    }
    start += moved
    if start == end {
      start = 0
      end = 0
    }
  }

  /// Releases every element.
  mutating func removeAll() {
    removeFirst(count)
  }

  /// Gives an empty buffer grown by a burst a small capacity again.
  mutating func shrink(toAtMost limit: Int, keeping kept: Int) {
    guard isEmpty, capacity > limit else { return }
    reallocate(capacity: kept)
  }

  /// Frees the memory; the buffer must be empty, and is not used again.
  func deallocate() {
    items.deallocate()
    tags.deallocate()
  }

  /// Moves the elements to the front of new memory of `newCapacity` (at least `count`).
  private mutating func reallocate(capacity newCapacity: Int) {
    let newItems = UnsafeMutablePointer<Item>.allocate(capacity: newCapacity)
    let newTags = UnsafeMutablePointer<Tag>.allocate(capacity: newCapacity)
    newItems.moveInitialize(from: items + start, count: count)
    newTags.moveInitialize(from: tags + start, count: count)
    items.deallocate()
    tags.deallocate()
    items = newItems
    tags = newTags
    end = count
    start = 0
    capacity = newCapacity
  }
}
