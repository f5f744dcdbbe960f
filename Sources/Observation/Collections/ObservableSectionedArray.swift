/// A list of sections, each with its items, whose observers receive each change as a
/// ``SectionedChangeSet``: batches of section and item changes staged for a sectioned table or
/// collection view.
///
/// Sections are matched across changes by their model's `id`, and items by theirs, also when an
/// item moves to another section. ``replace(with:)`` computes the change by identity; the direct
/// edits (``insertSection(_:at:)``, ``insert(_:at:)``, ``moveItem(from:to:)``, …) deliver just
/// what they did.
///
/// ```swift
/// struct TodoList: Identifiable, Equatable { let id: String }
/// struct Todo: Identifiable, Equatable { let id: Int; var title: String }
///
/// let lists = ObservableSectionedArray<TodoList, Todo>([
///   ArraySection(model: TodoList(id: "Inbox"), items: [Todo(id: 1, title: "Milk")])
/// ])
/// let token = lists.observe(options: [.initial, .new]) { changes in
///   print(changes)
/// }
/// // reset(1 sections)
/// lists.insert(Todo(id: 2, title: "Eggs"), at: ItemPath(section: 0, item: 1))  // +[[0, 1]]
/// lists.insertSection(ArraySection(model: TodoList(id: "Done")), at: 1)  // s+[1]
/// lists.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))
/// // ↷[[0, 0]→[1, 0]]
/// ```
///
/// Each edit checks its arguments before anything changes and stops with a message naming the
/// offset ("Section index is out of range", "Item index is out of range"). An edit costs one
/// copy of the section list and of the edited section's items (the last change set keeps the
/// sections before it), plus the moves `Array` would make.
///
/// ## Ordering and threads
///
/// The change sets are delivered through an ordinary ``ReadOnlyObservable``, so the ordering
/// contract and the Threading article hold for them: each observer receives every change set
/// once, in the order the changes were made, in the isolation it registered from; no lock is
/// held while observers run.
///
/// > Important: An edit is atomic: it computes the new sections from the current ones without a
/// > lock and stores them only if no other edit happened meanwhile, otherwise it starts again.
/// > A change made inside an observer's callback is delivered after the current change set.
/// > Changes that reach an observer as one (the changes of a `withObservationTransaction { }`)
/// > arrive as a reset (``SectionedChangeSet/isReset``), which a view shows by reloading.
public final class ObservableSectionedArray<Section: Identifiable, Item: Identifiable> {
  /// Holds the last change set, whose sections are the list's; each edit stores the next one.
  let changes: Observable<SectionedChangeSet<Section, Item>>

  /// Creates a list holding `sections`.
  ///
  /// - Parameter sections: The initial sections, with their items; none by default.
  public init(_ sections: [ArraySection<Section, Item>] = []) {
    changes = Observable(.reset(to: sections, version: 0))
  }

  /// The sections now, with their items: a value that later changes never alter.
  public var sections: [ArraySection<Section, Item>] {
    changes.value.sections
  }

  // MARK: - Observing

  /// Registers `closure` to receive each change set, until the returned token is cancelled or
  /// released.
  ///
  /// ```swift
  /// let token = lists.observe(options: [.initial, .new]) { changes in
  ///   for stage in changes.stages { print(stage) }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - options: `.initial` (a reset to the sections now, delivered inside this call) and
  ///     `.new` (every later change set); `[.new]` by default. Other options trap with "a
  ///     sectioned array's change sets are observed with .initial and .new only".
  ///   - isolation: Where `closure` runs when it reports no isolation of its own; see
  ///     ``ReadOnlyObservable/observe(options:isolation:_:)``.
  ///   - closure: Receives each change set, in order, in its own isolation (`@Sendable`: from
  ///     nonisolated code it runs on the delivering thread).
  /// - Returns: The token that owns the registration.
  public func observe(
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) _ closure:
      @escaping @isolated(any) @Sendable (SectionedChangeSet<Section, Item>) -> Void
  ) -> ObservationToken {
    Self.check(options)
    let call = CallbackIsolation.synchronous(closure)
    let follower = SectionedChangeFollower<Section, Item>(options: options)
    return changes.observe(
      options: [.initial, .new],
      in: CallbackIsolation(of: closure.isolation, calledFrom: isolation)
    ) { change, option in
      if let change = follower.follow(change, option) { call(change) }
    }
  }

  /// Registers `closure` to receive each change set while `observer` is alive; see
  /// ``ReadOnlyObservable/addObserver(_:removeIfExists:options:isolation:closure:)``.
  ///
  /// - Parameters:
  ///   - observer: The owner of the registration, held weakly.
  ///   - removeIfExists: Whether the owner's earlier registrations on this list are removed
  ///     first; `true` by default.
  ///   - options: `.initial` and `.new`, as for ``observe(options:isolation:_:)``.
  ///   - isolation: Where `closure` runs when it reports no isolation of its own.
  ///   - closure: Receives each change set, in order, in its own isolation.
  public func addObserver(
    _ observer: AnyObject,
    removeIfExists: Bool = true,
    options: ObservableOptions = [.new],
    isolation: isolated (any Actor)? = #isolation,
    @_inheritActorContext(always) closure:
      @escaping @isolated(any) @Sendable (SectionedChangeSet<Section, Item>) -> Void
  ) {
    Self.check(options)
    let call = CallbackIsolation.synchronous(closure)
    let follower = SectionedChangeFollower<Section, Item>(options: options)
    changes.addObserver(
      observer, removeIfExists: removeIfExists, options: [.initial, .new],
      in: CallbackIsolation(of: closure.isolation, calledFrom: isolation)
    ) { change, option in
      if let change = follower.follow(change, option) { call(change) }
    }
  }

  /// Removes every registration owned by `observer` on this list.
  ///
  /// - Parameter observer: The owner passed to
  ///   ``addObserver(_:removeIfExists:options:isolation:closure:)``.
  public func removeObserver(_ observer: AnyObject) {
    changes.removeObserver(observer)
  }

  private static func check(_ options: ObservableOptions) {
    require(
      options.isSubset(of: [.initial, .new]),
      "a sectioned array's change sets are observed with .initial and .new only")
  }

  // MARK: - Replacing

  /// Replaces every section and item, delivering the change by identity: sections and items
  /// inserted, deleted and moved (items also across sections), and reloaded where
  /// `isSectionUpdated` or `isItemUpdated` says a matched one changed.
  ///
  /// ```swift
  /// lists.replace(with: newSections, isSectionUpdated: { $0 != $1 }, isItemUpdated: { $0 != $1 })
  /// ```
  ///
  /// - Parameters:
  ///   - newSections: The sections from now on.
  ///   - isSectionUpdated: Whether a matched section's model changed, given old and new.
  ///   - isItemUpdated: Whether a matched item changed, given old and new.
  /// - Complexity: O(*n* log *n*) for *n* sections and items. Observers are not called when the
  ///   change has no stages.
  public func replace(
    with newSections: [ArraySection<Section, Item>],
    isSectionUpdated: (Section, Section) -> Bool,
    isItemUpdated: (Item, Item) -> Bool
  ) {
    edit { sections in
      let old = sections
      sections = newSections
      return SectionedChangeSet.stages(
        from: old, to: newSections, isSectionUpdated: isSectionUpdated,
        isItemUpdated: isItemUpdated)
    }
  }

  // MARK: - Editing sections

  /// Inserts `section`, with its items, at `index`.
  ///
  /// - Parameters:
  ///   - section: The section to insert.
  ///   - index: An offset in `0...sections.count`; any other traps with "Section index is out
  ///     of range".
  public func insertSection(_ section: ArraySection<Section, Item>, at index: Int) {
    edit { sections in
      require(index >= 0 && index <= sections.count, "Section index is out of range")
      sections.insert(section, at: index)
      return [Batch(sectionInsertions: [index], sections: sections)]
    }
  }

  /// Removes and returns the section at `index`, with its items.
  ///
  /// - Parameter index: An offset in `0..<sections.count`; any other traps with "Section index
  ///   is out of range".
  /// - Returns: The removed section.
  @discardableResult
  public func removeSection(at index: Int) -> ArraySection<Section, Item> {
    var removed: ArraySection<Section, Item>?
    edit { sections in
      Self.checkSection(index, in: sections)
      removed = sections.remove(at: index)
      return [Batch(sectionDeletions: [index], sections: sections)]
    }
    return removed!
  }

  /// Moves the section at `source`, with its items, so that it ends up at `destination`; when
  /// they are equal, nothing changes and observers are not called.
  ///
  /// - Parameters:
  ///   - source: Its offset now, in `0..<sections.count`.
  ///   - destination: Its offset afterwards, in `0..<sections.count`.
  ///   Any other offset traps with "Section index is out of range".
  public func moveSection(from source: Int, to destination: Int) {
    edit { sections in
      Self.checkSection(source, in: sections)
      Self.checkSection(destination, in: sections)
      guard source != destination else { return [] }
      sections.insert(sections.remove(at: source), at: destination)
      return [
        Batch(sectionMoves: [Batch.SectionMove(old: source, new: destination)], sections: sections)
      ]
    }
  }

  /// Replaces the model of the section at `index` (its header), keeping its items, and delivers
  /// a reload of that section.
  ///
  /// - Parameters:
  ///   - model: The section's new model; keep its `id`, so that a later ``replace(with:)``
  ///     matches it.
  ///   - index: An offset in `0..<sections.count`; any other traps with "Section index is out
  ///     of range".
  public func updateSection(_ model: Section, at index: Int) {
    edit { sections in
      Self.checkSection(index, in: sections)
      sections[index].model = model
      return [Batch(sectionReloads: [index], sections: sections)]
    }
  }

  // MARK: - Editing items

  /// Inserts `item` at `path`.
  ///
  /// - Parameters:
  ///   - item: The item to insert.
  ///   - path: A section in `0..<sections.count` and an item offset in `0...items.count` of
  ///     that section; any other traps with "Section index is out of range" or "Item index is
  ///     out of range".
  public func insert(_ item: Item, at path: ItemPath) {
    edit { sections in
      Self.checkSection(path.section, in: sections)
      let count = sections[path.section].items.count
      require(path.item >= 0 && path.item <= count, "Item index is out of range")
      sections[path.section].items.insert(item, at: path.item)
      return [Batch(itemInsertions: [path], sections: sections)]
    }
  }

  /// Removes and returns the item at `path`.
  ///
  /// - Parameter path: The position of an item; any other traps with "Section index is out of
  ///   range" or "Item index is out of range".
  /// - Returns: The removed item.
  @discardableResult
  public func removeItem(at path: ItemPath) -> Item {
    var removed: Item?
    edit { sections in
      Self.checkItem(at: path, in: sections)
      removed = sections[path.section].items.remove(at: path.item)
      return [Batch(itemDeletions: [path], sections: sections)]
    }
    return removed!
  }

  /// Moves the item at `source` so that it ends up at `destination`, in the same section or in
  /// another; when they are equal, nothing changes and observers are not called.
  ///
  /// - Parameters:
  ///   - source: The position of an item now.
  ///   - destination: Its position afterwards: an item offset in `0...items.count` of the
  ///     destination section, counted without the moved item (so at most `items.count - 1` in
  ///     its own section).
  ///   An invalid position traps with "Section index is out of range" or "Item index is out of
  ///   range".
  public func moveItem(from source: ItemPath, to destination: ItemPath) {
    edit { sections in
      Self.checkItem(at: source, in: sections)
      Self.checkSection(destination.section, in: sections)
      let count =
        sections[destination.section].items.count - (source.section == destination.section ? 1 : 0)
      require(destination.item >= 0 && destination.item <= count, "Item index is out of range")
      guard source != destination else { return [] }
      let item = sections[source.section].items.remove(at: source.item)
      sections[destination.section].items.insert(item, at: destination.item)
      return [Batch(itemMoves: [Batch.ItemMove(old: source, new: destination)], sections: sections)]
    }
  }

  /// Replaces the item at `path` and delivers a reload of it.
  ///
  /// - Parameters:
  ///   - item: The new item; keep its `id`, so that a later ``replace(with:)`` matches it.
  ///   - path: The position of an item; any other traps with "Section index is out of range" or
  ///     "Item index is out of range".
  public func updateItem(_ item: Item, at path: ItemPath) {
    edit { sections in
      Self.checkItem(at: path, in: sections)
      sections[path.section].items[path.item] = item
      return [Batch(itemReloads: [path], sections: sections)]
    }
  }

  // MARK: - Helpers

  private typealias Batch = SectionedBatchUpdate<Section, Item>

  /// Stores the sections that `body` makes of the current ones, with the stages it returns, as
  /// the next change set; runs `body` again if another edit happened meanwhile (see
  /// ``Observable/update(_:)``). `body` checks its arguments before it changes anything.
  private func edit(
    _ body: (inout [ArraySection<Section, Item>]) -> [SectionedBatchUpdate<Section, Item>]
  ) {
    changes.update { change in
      var sections = change.sections
      let stages = body(&sections)
      change = SectionedChangeSet(
        stages: stages, sections: sections, isReset: false, version: change.version &+ 1,
        baseVersion: change.version)
    }
  }

  private static func checkSection(_ section: Int, in sections: [ArraySection<Section, Item>]) {
    require(section >= 0 && section < sections.count, "Section index is out of range")
  }

  private static func checkItem(at path: ItemPath, in sections: [ArraySection<Section, Item>]) {
    checkSection(path.section, in: sections)
    let count = sections[path.section].items.count
    require(path.item >= 0 && path.item < count, "Item index is out of range")
  }
}

// Its only state is `changes`, an `Observable` that guards its value with its lock.
extension ObservableSectionedArray: @unchecked Sendable where Section: Sendable, Item: Sendable {}

extension ObservableSectionedArray where Section: Equatable, Item: Equatable {
  /// Replaces every section and item, delivering the change by identity, with a reload for each
  /// matched section or item that is not equal to its old value.
  ///
  /// ```swift
  /// lists.replace(with: [ArraySection(model: TodoList(id: "Inbox"), items: todos)])
  /// ```
  ///
  /// - Parameter newSections: The sections from now on.
  /// - Complexity: O(*n* log *n*) for *n* sections and items.
  public func replace(with newSections: [ArraySection<Section, Item>]) {
    replace(with: newSections, isSectionUpdated: { $0 != $1 }, isItemUpdated: { $0 != $1 })
  }
}
