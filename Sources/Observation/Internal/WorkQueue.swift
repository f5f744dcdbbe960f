/// A first-in, first-out queue of work that one thread at a time drains: the pending events of an
/// observable and the items of a main-queue lane or an actor lane.
///
/// Popping is O(1): the queue advances a head index instead of moving the elements behind it,
/// and reclaims the taken slots once they are the larger part of the storage. When the queue
/// empties it lets go of storage grown by a burst, so an idle observable does not keep the
/// memory of its busiest moment.
///
/// A popped element leaves no reference behind: the queue never releases an element itself when
/// it reclaims or empties its storage, so its owner can pop under its lock and let the element
/// go (its deinit may be user code) after unlocking.
///
/// Not thread-safe: its owner guards it with its own lock.
struct WorkQueue<Element> {
  private var elements: [Element?] = []
  private var head = 0
  /// How many elements were ever taken from the front: with it, a position counted from the
  /// queue's creation names one element for as long as it waits (see ``positionOfNewest``).
  private var taken = 0

  /// The storage kept once the queue is empty; a burst beyond it is released. Main-queue lanes
  /// keep the same for their batches: one rule for every buffer of queued work.
  static var retainedCapacity: Int { 64 }

  var isEmpty: Bool { head == elements.count }

  var count: Int { elements.count - head }

  /// The slots held, including taken ones not yet reclaimed (for tests of memory use).
  var capacity: Int { elements.capacity }

  mutating func append(_ element: Element) {
    elements.append(element)
  }

  /// Removes and returns the oldest element, or `nil` when the queue is empty.
  mutating func popFirst() -> Element? {
    guard head < elements.count else { return nil }
    let element = elements[head].take()
    head += 1
    taken += 1
    if head == elements.count {
      removeAll()
    } else if head >= 32 && head * 2 >= elements.count {
      elements.removeFirst(head)
      head = 0
    }
    return element
  }

  /// The oldest element, without removing it.
  var first: Element? {
    head < elements.count ? elements[head] : nil
  }

  /// The waiting element at `offset` from the oldest.
  subscript(offset: Int) -> Element {
    elements[head + offset].unsafelyUnwrapped
  }

  /// The newest element, for merging a new item into it.
  var last: Element? {
    get { head < elements.count ? elements[elements.count - 1] : nil }
    set {
      guard let newValue, head < elements.count else { return }
      elements[elements.count - 1] = newValue
    }
  }

  /// The position of the newest element, counted from the queue's creation: it names that
  /// element until it is taken, for ``update(at:_:)`` and ``removeLast()``.
  var positionOfNewest: Int { taken + count - 1 }

  /// Replaces the waiting element at `position` (see ``positionOfNewest``) with what `transform`
  /// returns for it; does nothing if that element was already taken.
  mutating func update(at position: Int, _ transform: (Element) -> Element) {
    let index = position - taken + head
    guard index >= head && index < elements.count else { return }
    elements[index] = transform(elements[index].unsafelyUnwrapped)
  }

  /// Removes and returns the newest element, which the caller knows is there.
  mutating func removeLast() -> Element {
    precondition(head < elements.count, "removeLast() on an empty queue")
    let element = elements.removeLast().unsafelyUnwrapped
    if head == elements.count { removeAll() }
    return element
  }

  /// Whether a waiting element satisfies `predicate`.
  func contains(where predicate: (Element) -> Bool) -> Bool {
    elements[head...].contains { predicate($0.unsafelyUnwrapped) }
  }

  /// How many waiting elements satisfy `predicate`.
  func count(where predicate: (Element) -> Bool) -> Int {
    elements[head...].count { predicate($0.unsafelyUnwrapped) }
  }

  /// Replaces each waiting element with what `transform` returns for it (for cancelling queued
  /// work in place, keeping the order of the rest).
  mutating func updateEach(_ transform: (Element) -> Element) {
    for index in head..<elements.count {
      elements[index] = transform(elements[index].unsafelyUnwrapped)
    }
  }

  /// Empties the queue, keeping a small buffer and releasing the storage of a burst.
  mutating func removeAll() {
    taken += elements.count - head
    elements.removeAll(keepingCapacity: elements.capacity <= Self.retainedCapacity)
    head = 0
  }

  /// Empties the queue and returns what it held, oldest first, so its owner can release it after
  /// unlocking.
  mutating func takeAll() -> [Element] {
    let taken = elements[head...].map { $0.unsafelyUnwrapped }
    removeAll()
    return taken
  }
}
