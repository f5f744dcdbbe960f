// The staged batches from one list of sections to another, matching sections and items by id:
// item reloads and deletions (with section deletions), then section insertions and moves, then
// item insertions and moves, then section reloads. Each stage is a batch UIKit accepts alone.

extension SectionedChangeSet where Section: Identifiable, Item: Identifiable {
  /// The stages from `old` to `new`.
  ///
  /// Sections match by id, and so do items, across sections; when an id occurs several times,
  /// its *k*-th occurrence before matches its *k*-th occurrence after. An item matches only
  /// between sections that match: one leaving a deleted section, or joining an inserted one, is
  /// deleted or inserted with its section. The moves are minimal within each section.
  ///
  /// - Complexity: O(*n* log *n*) for *n* sections and items.
  static func stages(
    from old: [ArraySection<Section, Item>],
    to new: [ArraySection<Section, Item>],
    isSectionUpdated: (Section, Section) -> Bool,
    isItemUpdated: (Item, Item) -> Bool
  ) -> [SectionedBatchUpdate<Section, Item>] {
    typealias Batch = SectionedBatchUpdate<Section, Item>
    // Sections: the old offset of each new one (-1: inserted), and the new offset of each old
    // one (-1: deleted).
    let sectionOrigins = matchOccurrences(old.map(\.model.id), new.map(\.model.id))
    var sectionTargets = [Int](repeating: -1, count: old.count)
    for (newOffset, oldOffset) in sectionOrigins.enumerated() where oldOffset >= 0 {
      sectionTargets[oldOffset] = newOffset
    }
    // Items of matched sections, flattened in order.
    let (oldPaths, oldIDs) = flatten(old) { sectionTargets[$0] >= 0 }
    let (newPaths, newIDs) = flatten(new) { sectionOrigins[$0] >= 0 }
    var itemOrigins: [[ItemPath?]] = new.map { [ItemPath?](repeating: nil, count: $0.items.count) }
    var isKept: [[Bool]] = old.map { [Bool](repeating: false, count: $0.items.count) }
    for (flat, origin) in matchOccurrences(oldIDs, newIDs).enumerated() where origin >= 0 {
      let source = oldPaths[origin]
      let target = newPaths[flat]
      itemOrigins[target.section][target.item] = source
      isKept[source.section][source.item] = true
    }

    var stages: [Batch] = []
    // 1. Item reloads (old positions, new values) with section and item deletions.
    var itemReloads: [ItemPath] = []
    var current = old
    for (section, origins) in itemOrigins.enumerated() {
      for (item, origin) in origins.enumerated() {
        guard let origin else { continue }
        let element = new[section].items[item]
        guard isItemUpdated(old[origin.section].items[origin.item], element) else { continue }
        itemReloads.append(origin)
        current[origin.section].items[origin.item] = element
      }
    }
    let sectionDeletions = old.indices.filter { sectionTargets[$0] < 0 }
    var itemDeletions: [ItemPath] = []
    var remaining: [ArraySection<Section, Item>] = []
    // For each kept item, its offset once the deletions are made.
    var offsetsAfterDeletion: [[Int]] = old.map { [Int](repeating: -1, count: $0.items.count) }
    var sectionOffsetsAfterDeletion = [Int](repeating: -1, count: old.count)
    for section in old.indices where sectionTargets[section] >= 0 {
      sectionOffsetsAfterDeletion[section] = remaining.count
      var kept: [Item] = []
      for (item, element) in current[section].items.enumerated() {
        if isKept[section][item] {
          offsetsAfterDeletion[section][item] = kept.count
          kept.append(element)
        } else {
          itemDeletions.append(ItemPath(section: section, item: item))
        }
      }
      remaining.append(ArraySection(model: current[section].model, items: kept))
    }
    if !itemReloads.isEmpty || !sectionDeletions.isEmpty || !itemDeletions.isEmpty {
      stages.append(
        Batch(
          sectionDeletions: sectionDeletions, itemReloads: itemReloads.sorted(),
          itemDeletions: itemDeletions, sections: remaining))
    }
    // 2. Section insertions and moves: the sections in their final order, the matched ones
    // still with their remaining items and old model, the inserted ones complete.
    var arranged: [ArraySection<Section, Item>] = []
    var arrangedOrigins: [Int] = []
    for (section, origin) in sectionOrigins.enumerated() {
      if origin >= 0 {
        arranged.append(remaining[sectionOffsetsAfterDeletion[origin]])
        arrangedOrigins.append(sectionOffsetsAfterDeletion[origin])
      } else {
        arranged.append(new[section])
        arrangedOrigins.append(-1)
      }
    }
    let sectionChange = ArrayChangeSet<Int>.build(
      elements: ArraySnapshot(arrangedOrigins), origins: arrangedOrigins, updated: [],
      oldCount: remaining.count)
    if !sectionChange.insertions.isEmpty || !sectionChange.moves.isEmpty {
      stages.append(
        Batch(
          sectionInsertions: sectionChange.insertions,
          sectionMoves: sectionChange.moves.map { Batch.SectionMove(old: $0.old, new: $0.new) },
          sections: arranged))
    }
    // 3. Item insertions and moves, within and across sections, from the arranged sections.
    var itemInsertions: [ItemPath] = []
    var itemMoves: [Batch.ItemMove] = []
    var filled = arranged
    for (section, origin) in sectionOrigins.enumerated() where origin >= 0 {
      var localOrigins = [Int](repeating: -1, count: new[section].items.count)
      for (item, source) in itemOrigins[section].enumerated() {
        let target = ItemPath(section: section, item: item)
        guard let source else {
          itemInsertions.append(target)
          continue
        }
        let from = ItemPath(
          section: sectionTargets[source.section],
          item: offsetsAfterDeletion[source.section][source.item])
        if from.section == section {
          localOrigins[item] = from.item
        } else {
          itemMoves.append(Batch.ItemMove(old: from, new: target))
        }
      }
      let local = ArrayChangeSet<Int>.build(
        elements: ArraySnapshot(localOrigins), origins: localOrigins, updated: [],
        oldCount: arranged[section].items.count)
      for move in local.moves {
        itemMoves.append(
          Batch.ItemMove(
            old: ItemPath(section: section, item: move.old),
            new: ItemPath(section: section, item: move.new)))
      }
      filled[section].items = new[section].items
    }
    if !itemInsertions.isEmpty || !itemMoves.isEmpty {
      stages.append(
        Batch(
          itemInsertions: itemInsertions, itemMoves: itemMoves.sorted { $0.new < $1.new },
          sections: filled))
    }
    // 4. Section reloads, at their final offsets.
    var sectionReloads: [Int] = []
    for (section, origin) in sectionOrigins.enumerated() where origin >= 0 {
      if isSectionUpdated(old[origin].model, new[section].model) { sectionReloads.append(section) }
    }
    if !sectionReloads.isEmpty {
      stages.append(Batch(sectionReloads: sectionReloads, sections: new))
    }
    return stages
  }

  /// The positions and ids of the items of the sections that `isIncluded` accepts, in order.
  private static func flatten(
    _ sections: [ArraySection<Section, Item>], where isIncluded: (Int) -> Bool
  ) -> (paths: [ItemPath], ids: [Item.ID]) {
    var paths: [ItemPath] = []
    var ids: [Item.ID] = []
    for (section, content) in sections.enumerated() where isIncluded(section) {
      for (item, element) in content.items.enumerated() {
        paths.append(ItemPath(section: section, item: item))
        ids.append(element.id)
      }
    }
    return (paths, ids)
  }
}

/// For each of `new`, the offset in `old` of the id it matches, or -1: the *k*-th occurrence of
/// an id in `new` matches its *k*-th occurrence in `old`.
private func matchOccurrences<ID: Hashable>(_ old: [ID], _ new: [ID]) -> [Int] {
  var offsets: [ID: [Int]] = [:]
  for (offset, id) in old.enumerated() { offsets[id, default: []].append(offset) }
  var used: [ID: Int] = [:]
  var origins = [Int](repeating: -1, count: new.count)
  for (offset, id) in new.enumerated() {
    guard let candidates = offsets[id] else { continue }
    let next = used[id, default: 0]
    guard next < candidates.count else { continue }
    used[id] = next + 1
    origins[offset] = candidates[next]
  }
  return origins
}
