/// The waiting items of a ``MainQueueLane`` and their tags, oldest first, in memory the buffer
/// manages itself.
///
/// Not a pair of arrays: the lane's code is unspecialized, and there every call into a generic
/// `Array` method looks the array type's metadata up in the runtime's table, once per append on
/// the producer's thread. These pointers need only the value witnesses of `Item` and `Tag`,
/// which come with the lane.
///
/// Not thread-safe, and copies share memory: the lane owns each buffer, guards it with its lock
/// (or hands it to the one thread that drains), and calls ``deallocate()`` exactly once.
/// Nothing here releases an element except ``removeAll()`` and ``removeFirst(_:)``, which the
/// lane calls without its lock.
struct LaneBuffer<Item, Tag> {
  private var items: UnsafeMutablePointer<Item>
  private var tags: UnsafeMutablePointer<Tag>
  private(set) var count = 0
  private(set) var capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
    items = .allocate(capacity: capacity)
    tags = .allocate(capacity: capacity)
  }

  var isEmpty: Bool { count == 0 }

  /// The item at `index` and its tag, valid until the buffer changes.
  @inline(__always)
  func element(at index: Int) -> (item: UnsafePointer<Item>, tag: UnsafePointer<Tag>) {
    (UnsafePointer(items + index), UnsafePointer(tags + index))
  }

  @inline(__always)
  mutating func append(_ item: consuming Item, _ tag: consuming Tag) {
    if count == capacity { reallocate(capacity: capacity * 2) }
    (items + count).initialize(to: item)
    (tags + count).initialize(to: tag)
    count += 1
  }

  /// Replaces the newest item and tag (the buffer is not empty), returning the item replaced,
  /// for the caller to release after unlocking.
  mutating func replaceLast(_ item: consuming Item, _ tag: consuming Tag) -> Item {
    let last = count - 1
    let replaced = (items + last).move()
    (items + last).initialize(to: item)
    (tags + last).pointee = tag
    return replaced
  }

  /// The newest tag; the buffer is not empty.
  var lastTag: Tag { tags[count - 1] }

  /// Moves every element of `other` to the end of this buffer, leaving `other` empty.
  mutating func append(movingFrom other: inout LaneBuffer) {
    if count + other.count > capacity {
      reallocate(capacity: Swift.max(capacity * 2, count + other.count))
    }
    (items + count).moveInitialize(from: other.items, count: other.count)
    (tags + count).moveInitialize(from: other.tags, count: other.count)
    count += other.count
    other.count = 0
  }

  /// Releases the first `delivered` elements and moves the rest to the front.
  mutating func removeFirst(_ delivered: Int) {
    items.deinitialize(count: delivered)
    tags.deinitialize(count: delivered)
    let rest = count - delivered
    items.moveInitialize(from: items + delivered, count: rest)
    tags.moveInitialize(from: tags + delivered, count: rest)
    count = rest
  }

  /// Releases every element.
  mutating func removeAll() {
    items.deinitialize(count: count)
    tags.deinitialize(count: count)
    count = 0
  }

  /// Gives an empty buffer grown by a burst a small capacity again.
  mutating func shrink(toAtMost limit: Int, keeping kept: Int) {
    guard count == 0, capacity > limit else { return }
    reallocate(capacity: kept)
  }

  /// Frees the memory; the buffer must be empty, and is not used again.
  func deallocate() {
    items.deallocate()
    tags.deallocate()
  }

  private mutating func reallocate(capacity newCapacity: Int) {
    let newItems = UnsafeMutablePointer<Item>.allocate(capacity: newCapacity)
    let newTags = UnsafeMutablePointer<Tag>.allocate(capacity: newCapacity)
    newItems.moveInitialize(from: items, count: count)
    newTags.moveInitialize(from: tags, count: count)
    items.deallocate()
    tags.deallocate()
    items = newItems
    tags = newTags
    capacity = newCapacity
  }
}
