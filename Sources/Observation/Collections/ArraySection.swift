/// One section of an ``ObservableSectionedArray``: the section's own value (its header, say) and
/// its items, in order.
///
/// A section is matched across changes by its model's `id`, and each item by its own `id`, as
/// RxDataSources' `SectionModel` and DifferenceKit's `ArraySection` are:
///
/// ```swift
/// struct TodoList: Identifiable, Equatable { let id: String }
/// struct Todo: Identifiable, Equatable { let id: Int; var title: String }
///
/// let inbox = ArraySection(model: TodoList(id: "Inbox"), items: [Todo(id: 1, title: "Milk")])
/// print(inbox.items.count)  // 1
/// ```
public struct ArraySection<Section, Item> {
  /// The section's own value: what identifies it, and what its header shows.
  public var model: Section
  /// The section's items, in order.
  public var items: [Item]

  /// Creates a section.
  ///
  /// - Parameters:
  ///   - model: The section's own value.
  ///   - items: Its items, in order; none by default.
  public init(model: Section, items: [Item] = []) {
    self.model = model
    self.items = items
  }
}

extension ArraySection: Equatable where Section: Equatable, Item: Equatable {}

// Both stored properties are values.
extension ArraySection: Sendable where Section: Sendable, Item: Sendable {}
