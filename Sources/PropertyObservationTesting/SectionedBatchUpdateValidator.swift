public import PropertyObservation

/// A fake sectioned table view: a ``/PropertyObservation/SectionedBatchUpdateTarget`` that
/// checks every batch the way UIKit does, and records what it was asked to do.
///
/// Bind a sectioned list to it in a test, make changes, and expect no problems and sections
/// equal to the list's:
///
/// ```swift
/// struct Group: Identifiable, Equatable { let id: String }
/// struct Row: Identifiable, Equatable { let id: Int }
///
/// @MainActor func checkGroups() {
///   let list = ObservableSectionedArray<Group, Row>([ArraySection(model: Group(id: "A"))])
///   let table = SectionedBatchUpdateValidator<Group, Row>()
///   list.bind(to: table)
///   list.insert(Row(id: 1), at: ItemPath(section: 0, item: 0))
///   assert(table.problems.isEmpty && table.sections == list.sections)
/// }
/// ```
///
/// A batch passes when, like `performBatchUpdates` requires: section reloads, deletions and move
/// sources are unique offsets of the sections before the batch, and none is two of these;
/// section insertions and move targets are unique offsets after it, and none is both; item
/// reloads, deletions and move sources are unique positions before the batch, none of them in a
/// deleted or reloaded section, and none is two of these; item insertions and move targets are
/// unique positions after it, none of them in an inserted or reloaded section, and none is both;
/// the section count agrees, and so does each kept section's item count (before − deleted −
/// moved out + inserted + moved in); and replaying the batch on the data before it gives exactly
/// the batch's sections, except what it reloads or inserts.
@MainActor
public final class SectionedBatchUpdateValidator<Section: Equatable, Item: Equatable>:
  SectionedBatchUpdateTarget
{
  /// The sections the fake view shows: the data source after the last reload or batch.
  public private(set) var sections: [ArraySection<Section, Item>] = []
  /// What the view was asked to do, in order: `reloadAll(2)`, `batch(s-[1] +[[0, 0]])`, ….
  public private(set) var log: [String] = []
  /// Every problem found so far, in order; empty when every batch was valid.
  public private(set) var problems: [String] = []

  /// Creates a fake view with no sections.
  public init() {}

  /// Replaces every section.
  ///
  /// - Parameter sections: The new sections.
  public func reloadAll(_ sections: [ArraySection<Section, Item>]) {
    self.sections = sections
    log.append("reloadAll(\(sections.count))")
  }

  /// Checks `batch` against the sections shown, records any problem, then shows its sections.
  ///
  /// - Parameter batch: The batch to apply.
  public func performBatch(_ batch: SectionedBatchUpdate<Section, Item>) {
    problems += Self.problems(in: batch, appliedTo: sections)
    sections = batch.sections
    log.append("batch(\(batch))")
  }

  /// The problems UIKit would find in `batch` applied to `old`: none when it is valid.
  ///
  /// - Parameters:
  ///   - batch: The batch to check.
  ///   - old: The sections before the batch.
  /// - Returns: One message per problem, in a fixed order.
  public nonisolated static func problems(
    in batch: SectionedBatchUpdate<Section, Item>, appliedTo old: [ArraySection<Section, Item>]
  ) -> [String] {
    var problems: [String] = []
    let new = batch.sections
    func unique<T: Hashable>(_ values: [T], _ what: String, isValid: (T) -> Bool) -> Set<T> {
      var seen = Set<T>()
      for value in values {
        if !isValid(value) { problems.append("\(what) \(value) is out of range") }
        if !seen.insert(value).inserted { problems.append("\(what) \(value) appears twice") }
      }
      return seen
    }
    func disjoint<T: Hashable & Comparable>(_ a: Set<T>, _ b: Set<T>, _ what: String) {
      for value in a.intersection(b).sorted() { problems.append("\(value) is \(what)") }
    }
    // Sections.
    let oldSections = 0..<old.count
    let newSections = 0..<new.count
    let sectionReloads = unique(batch.sectionReloads, "section reload") { oldSections ~= $0 }
    let sectionDeletions = unique(batch.sectionDeletions, "section deletion") {
      oldSections ~= $0
    }
    let sectionSources = unique(batch.sectionMoves.map(\.old), "section move source") {
      oldSections ~= $0
    }
    let sectionInsertions = unique(batch.sectionInsertions, "section insertion") {
      newSections ~= $0
    }
    let sectionTargets = unique(batch.sectionMoves.map(\.new), "section move target") {
      newSections ~= $0
    }
    disjoint(sectionReloads, sectionDeletions, "a section reloaded and deleted")
    disjoint(sectionReloads, sectionSources, "a section reloaded and moved")
    disjoint(sectionDeletions, sectionSources, "a section deleted and moved")
    disjoint(sectionInsertions, sectionTargets, "a section inserted and a move target")
    if old.count - sectionDeletions.count + sectionInsertions.count != new.count {
      problems.append(
        "\(old.count) sections - \(sectionDeletions.count) deleted + \(sectionInsertions.count)"
          + " inserted is not the \(new.count) sections after the batch")
    }
    guard problems.isEmpty else { return problems }
    // The old section each new one shows (nil: inserted): moved ones at their targets, the
    // others in order in the remaining slots.
    var shownSection = [Int?](repeating: nil, count: new.count)
    var isTaken = [Bool](repeating: false, count: new.count)
    for offset in sectionInsertions { isTaken[offset] = true }
    for move in batch.sectionMoves {
      shownSection[move.new] = move.old
      isTaken[move.new] = true
    }
    var slot = 0
    for offset in old.indices
    where !sectionDeletions.contains(offset) && !sectionSources.contains(offset) {
      while isTaken[slot] { slot += 1 }
      shownSection[slot] = offset
      slot += 1
    }
    // Items.
    func isOld(_ path: ItemPath) -> Bool {
      oldSections ~= path.section && old[path.section].items.indices ~= path.item
    }
    func isNew(_ path: ItemPath) -> Bool {
      newSections ~= path.section && new[path.section].items.indices ~= path.item
    }
    let itemReloads = unique(batch.itemReloads, "item reload", isValid: isOld)
    let itemDeletions = unique(batch.itemDeletions, "item deletion", isValid: isOld)
    let itemSources = unique(batch.itemMoves.map(\.old), "item move source", isValid: isOld)
    let itemInsertions = unique(batch.itemInsertions, "item insertion", isValid: isNew)
    let itemTargets = unique(batch.itemMoves.map(\.new), "item move target", isValid: isNew)
    disjoint(itemReloads, itemDeletions, "an item reloaded and deleted")
    disjoint(itemReloads, itemSources, "an item reloaded and moved")
    disjoint(itemDeletions, itemSources, "an item deleted and moved")
    disjoint(itemInsertions, itemTargets, "an item inserted and a move target")
    let goneSections = sectionDeletions.union(sectionReloads)
    for path in (itemReloads.union(itemDeletions).union(itemSources)).sorted()
    where goneSections.contains(path.section) {
      problems.append("item \(path) is in a deleted or reloaded section")
    }
    let freshSections = sectionInsertions.union(
      batch.sectionReloads.compactMap { reloaded in
        shownSection.firstIndex(of: reloaded)
      })
    for path in itemInsertions.union(itemTargets).sorted()
    where freshSections.contains(path.section) {
      problems.append("item \(path) is in an inserted or reloaded section")
    }
    guard problems.isEmpty else { return problems }
    for (section, origin) in shownSection.enumerated() {
      guard let origin, !sectionReloads.contains(origin) else { continue }
      let expected =
        old[origin].items.count
        - itemDeletions.count { $0.section == origin } - itemSources.count { $0.section == origin }
        + itemInsertions.count { $0.section == section }
        + itemTargets.count { $0.section == section }
      if expected != new[section].items.count {
        problems.append(
          "section \(section) would have \(expected) items after the batch; the data source has"
            + " \(new[section].items.count)")
      }
    }
    guard problems.isEmpty else { return problems }
    // Replay each kept section: moved-in items at their targets, inserted slots left to the data,
    // the section's survivors in order in the rest; compare what is neither inserted nor reloaded.
    var movedIn: [ItemPath: ItemPath] = [:]
    for move in batch.itemMoves { movedIn[move.new] = move.old }
    for (section, origin) in shownSection.enumerated() {
      guard let origin, !sectionReloads.contains(origin) else { continue }
      if old[origin].model != new[section].model {
        problems.append("section \(section) shows an old model after the batch")
      }
      var survivors = old[origin].items.indices.lazy.map { ItemPath(section: origin, item: $0) }
        .filter { !itemDeletions.contains($0) && !itemSources.contains($0) }.makeIterator()
      for item in new[section].items.indices {
        let target = ItemPath(section: section, item: item)
        guard !itemInsertions.contains(target) else { continue }
        guard let source = movedIn[target] ?? survivors.next() else { continue }
        guard !itemReloads.contains(source),
          old[source.section].items[source.item] != new[section].items[item]
        else { continue }
        problems.append(
          "item \(target) shows \(old[source.section].items[source.item]) after the batch; the"
            + " data source has \(new[section].items[item])")
      }
    }
    return problems
  }
}
