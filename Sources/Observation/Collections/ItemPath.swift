/// The position of an item in a sectioned list: its section's offset and its offset within that
/// section, as `IndexPath(item:section:)` is in UIKit (without needing Foundation).
///
/// ```swift
/// let path = ItemPath(section: 1, item: 0)
/// print(path)  // [1, 0]
/// ```
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The offset of the section.
  public var section: Int
  /// The offset of the item within its section.
  public var item: Int

  /// Creates a position.
  ///
  /// - Parameters:
  ///   - section: The offset of the section.
  ///   - item: The offset of the item within the section.
  public init(section: Int, item: Int) {
    self.section = section
    self.item = item
  }

  /// Orders positions by section, then by item, as UIKit sorts index paths.
  ///
  /// - Parameters:
  ///   - lhs: A position.
  ///   - rhs: Another position.
  /// - Returns: Whether `lhs` comes before `rhs`.
  public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
    (lhs.section, lhs.item) < (rhs.section, rhs.item)
  }

  /// `[section, item]`, for logs.
  public var description: String { "[\(section), \(item)]" }
}
