/// One change of an ``ObservableArray``: what was removed, inserted, moved and updated, and the
/// elements right after it.
///
/// Offsets follow `CollectionDifference` and table views: ``removals`` are offsets in the array
/// before the change, ``insertions`` offsets in ``elements`` (after it). An element present
/// before and after is *matched*; the matched elements that kept their relative order stay put,
/// and the others are ``moves`` (old offset → new offset). The moves are minimal: every matched
/// element outside one longest run of elements that kept their order, so `ABCD → BCDA` is one
/// move (`A`), not three. ``updates`` are matched elements whose content changed (possibly also
/// moved).
///
/// ```swift
/// let todos = ObservableArray(["Milk", "Eggs"])
/// let token = todos.observe(options: [.new]) { changes in
///   print(changes.insertions, changes.removals, Array(changes.elements))
/// }
/// todos.append("Bread")  // [2] [] ["Milk", "Eggs", "Bread"]
/// ```
///
/// A change set is a value: its ``elements`` is a snapshot that later changes never alter.
public struct ArrayChangeSet<Element> {
  /// A matched element's offset before the change and after it.
  public struct Match: Hashable, Sendable, CustomStringConvertible {
    /// The offset in the array before the change.
    public let old: Int
    /// The offset in ``ArrayChangeSet/elements``, after the change.
    public let new: Int

    /// Creates a match.
    ///
    /// - Parameters:
    ///   - old: The offset before the change.
    ///   - new: The offset after the change.
    public init(old: Int, new: Int) {
      self.old = old
      self.new = new
    }

    /// `old→new`, for logs.
    public var description: String { "\(old)→\(new)" }
  }

  /// The elements right after the change: a snapshot, never the live array.
  public let elements: ArraySnapshot<Element>
  /// Offsets, before the change, of the elements removed; ascending.
  public let removals: [Int]
  /// Offsets, in ``elements``, of the elements inserted; ascending.
  public let insertions: [Int]
  /// Matched elements that changed their place relative to the others; ascending by new offset.
  public let moves: [Match]
  /// Matched elements whose content changed (whether or not they moved); ascending by new offset.
  public let updates: [Match]
  /// Whether this change replaced everything without relating old to new elements: the
  /// `.initial` change set, ``ObservableArray/reset(to:)``, and any merge that includes one. A
  /// table view reloads instead of animating it.
  public let isReset: Bool
  /// The owning array's count of changes once this one was made (see
  /// `ReadOnlyObservableArray.publishLocked`): a registration skips the change sets that its
  /// `.initial` elements already include.
  var version: UInt = 0
  /// Whether this is the copy that the array's observable of change sets keeps once it is
  /// delivered, with its elements let go so that the next edit finds the storage unshared
  /// (see `ReadOnlyObservableArray.startingPoint(from:)`).
  var isUnpinned = false

  init(
    elements: ArraySnapshot<Element>, removals: [Int], insertions: [Int], moves: [Match],
    updates: [Match], isReset: Bool = false
  ) {
    self.elements = elements
    self.removals = removals
    self.insertions = insertions
    self.moves = moves
    self.updates = updates
    self.isReset = isReset
  }

  /// A change set that inserts every element of `elements` into an empty array: what
  /// `.initial` delivers, and a reset from an empty array.
  ///
  /// - Parameter elements: The elements.
  /// - Returns: A reset change set from no elements to `elements`.
  public static func inserting(_ elements: ArraySnapshot<Element>) -> ArrayChangeSet {
    ArrayChangeSet(
      elements: elements, removals: [], insertions: Array(0..<elements.count), moves: [],
      updates: [], isReset: true)
  }

  /// A change set that removes all `oldCount` elements and inserts every one of `elements`.
  static func reset(from oldCount: Int, to elements: ArraySnapshot<Element>) -> ArrayChangeSet {
    ArrayChangeSet(
      elements: elements, removals: Array(0..<oldCount), insertions: Array(0..<elements.count),
      moves: [], updates: [], isReset: true)
  }

  /// This change set without its elements (`empty`, an array's shared empty snapshot, so that
  /// nothing is allocated), as the observable of change sets keeps it once it is delivered.
  func unpinned(_ empty: ArraySnapshot<Element>) -> ArrayChangeSet {
    var held = ArrayChangeSet(
      elements: empty, removals: [], insertions: [], moves: [], updates: [])
    held.version = version
    held.isUnpinned = true
    return held
  }

  /// The number of elements before the change.
  public var oldCount: Int {
    elements.count - insertions.count + removals.count
  }

  /// Whether nothing was removed, inserted, moved or updated.
  public var isEmpty: Bool {
    removals.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty
  }

  /// How many removals, insertions, moves and updates the change has in all.
  public var changeCount: Int {
    removals.count + insertions.count + moves.count + updates.count
  }
}

// The stored properties are values; `elements` is Sendable when `Element` is.
extension ArrayChangeSet: Sendable where Element: Sendable {}

extension ArrayChangeSet: CustomStringConvertible {
  /// A one-line summary, for logs: `-[1] +[0, 3] ↷[2→0] ~[4→4]`.
  public var description: String {
    var parts: [String] = []
    if isReset { parts.append("reset") }
    if !removals.isEmpty { parts.append("-\(removals)") }
    if !insertions.isEmpty { parts.append("+\(insertions)") }
    if !moves.isEmpty { parts.append("↷\(moves)") }
    if !updates.isEmpty { parts.append("~\(updates)") }
    return parts.isEmpty ? "no change" : parts.joined(separator: " ")
  }
}
