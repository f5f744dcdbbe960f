/// One batch of section and item changes that a sectioned table or collection view can animate,
/// with the sections its data source must hold once the batch is applied.
///
/// A ``SectionedChangeSet`` is a list of such batches (stages), each of which UIKit's
/// `performBatchUpdates` accepts: ``sectionReloads``, ``sectionDeletions``, ``itemReloads``,
/// ``itemDeletions`` and the sources of moves are positions in the data before the batch;
/// ``sectionInsertions``, ``itemInsertions`` and the targets of moves are positions in
/// ``sections``, the data after it. Set the data source to ``sections`` inside the batch:
///
/// ```swift
/// func perform(_ batch: SectionedBatchUpdate<TodoList, Todo>) {
///   collectionView.performBatchUpdates {
///     data = batch.sections
///     collectionView.deleteSections(IndexSet(batch.sectionDeletions))
///     collectionView.deleteItems(at: batch.itemDeletions.map { IndexPath(item: $0.item, section: $0.section) })
///     // reloads, insertions and moves likewise
///   }
/// }
/// ```
public struct SectionedBatchUpdate<Section, Item> {
  /// A section's offset before the batch and after it (`old→new`), as a move of rows is.
  public typealias SectionMove = ArrayChangeSet<Section>.Match

  /// An item's position before the batch and after it (possibly in another section).
  public struct ItemMove: Hashable, Sendable, CustomStringConvertible {
    /// The position before the batch.
    public let old: ItemPath
    /// The position in ``SectionedBatchUpdate/sections``, after the batch.
    public let new: ItemPath

    /// Creates a move.
    ///
    /// - Parameters:
    ///   - old: The position before the batch.
    ///   - new: The position after it.
    public init(old: ItemPath, new: ItemPath) {
      self.old = old
      self.new = new
    }

    /// `[s, i]→[s, i]`, for logs.
    public var description: String { "\(old)→\(new)" }
  }

  /// The sections to reload, at offsets before the batch; ascending.
  public let sectionReloads: [Int]
  /// The sections to delete, at offsets before the batch; ascending.
  public let sectionDeletions: [Int]
  /// The sections to insert, at offsets in ``sections``; ascending.
  public let sectionInsertions: [Int]
  /// The sections to move, from an offset before the batch to one in ``sections``.
  public let sectionMoves: [SectionMove]
  /// The items to reload, at positions before the batch; ascending.
  public let itemReloads: [ItemPath]
  /// The items to delete, at positions before the batch; ascending.
  public let itemDeletions: [ItemPath]
  /// The items to insert, at positions in ``sections``; ascending.
  public let itemInsertions: [ItemPath]
  /// The items to move, from a position before the batch to one in ``sections``.
  public let itemMoves: [ItemMove]
  /// The data the data source holds after the batch (set it inside the batch).
  public let sections: [ArraySection<Section, Item>]

  /// Creates a batch.
  ///
  /// - Parameters:
  ///   - sectionReloads: Sections to reload, at old offsets.
  ///   - sectionDeletions: Sections to delete, at old offsets.
  ///   - sectionInsertions: Sections to insert, at new offsets.
  ///   - sectionMoves: Sections to move, old offset to new offset.
  ///   - itemReloads: Items to reload, at old positions.
  ///   - itemDeletions: Items to delete, at old positions.
  ///   - itemInsertions: Items to insert, at new positions.
  ///   - itemMoves: Items to move, old position to new position.
  ///   - sections: The data after the batch.
  public init(
    sectionReloads: [Int] = [], sectionDeletions: [Int] = [], sectionInsertions: [Int] = [],
    sectionMoves: [SectionMove] = [], itemReloads: [ItemPath] = [],
    itemDeletions: [ItemPath] = [], itemInsertions: [ItemPath] = [], itemMoves: [ItemMove] = [],
    sections: [ArraySection<Section, Item>]
  ) {
    self.sectionReloads = sectionReloads
    self.sectionDeletions = sectionDeletions
    self.sectionInsertions = sectionInsertions
    self.sectionMoves = sectionMoves
    self.itemReloads = itemReloads
    self.itemDeletions = itemDeletions
    self.itemInsertions = itemInsertions
    self.itemMoves = itemMoves
    self.sections = sections
  }

  /// Whether the batch changes nothing.
  public var isEmpty: Bool {
    sectionReloads.isEmpty && sectionDeletions.isEmpty && sectionInsertions.isEmpty
      && sectionMoves.isEmpty && itemReloads.isEmpty && itemDeletions.isEmpty
      && itemInsertions.isEmpty && itemMoves.isEmpty
  }
}

// Every stored property is a value; `sections` is Sendable when its parts are.
extension SectionedBatchUpdate: Sendable where Section: Sendable, Item: Sendable {}

extension SectionedBatchUpdate: CustomStringConvertible {
  /// A one-line summary, for logs: sections first (`s~[0] s-[1] s+[2] s↷[3→0]`), then items
  /// (`~[[0, 1]] -[[1, 0]] +[[0, 0]] ↷[[0, 2]→[1, 0]]`).
  public var description: String {
    var parts: [String] = []
    if !sectionReloads.isEmpty { parts.append("s~\(sectionReloads)") }
    if !sectionDeletions.isEmpty { parts.append("s-\(sectionDeletions)") }
    if !sectionInsertions.isEmpty { parts.append("s+\(sectionInsertions)") }
    if !sectionMoves.isEmpty { parts.append("s↷\(sectionMoves)") }
    if !itemReloads.isEmpty { parts.append("~\(itemReloads)") }
    if !itemDeletions.isEmpty { parts.append("-\(itemDeletions)") }
    if !itemInsertions.isEmpty { parts.append("+\(itemInsertions)") }
    if !itemMoves.isEmpty { parts.append("↷\(itemMoves)") }
    return parts.isEmpty ? "no change" : parts.joined(separator: " ")
  }
}
