/// The step state of a sorted view (``ReadOnlyObservableArray/sorted(by:)``): which element of
/// the source each row of the sorted array shows, and the step that keeps the rows sorted
/// change set by change set.
///
/// Only the source registration's calls touch it, one at a time (see `DerivedArray`).
final class SortedOrder<Element> {
  private let areInIncreasingOrder: (Element, Element) -> Bool
  /// For each offset of the sorted array, the offset of its element in the source.
  private var sourceOffsets: [Int] = []

  init(_ areInIncreasingOrder: @escaping (Element, Element) -> Bool) {
    self.areInIncreasingOrder = areInIncreasingOrder
  }

  /// Sorts `elements` from scratch, stably (equal elements keep the source's order), and
  /// remembers the order.
  func seed(_ elements: ArraySnapshot<Element>) -> [Element] {
    let isBefore = areInIncreasingOrder
    sourceOffsets = elements.indices.sorted { left, right in
      let (a, b) = (elements[left], elements[right])
      if isBefore(a, b) { return true }
      if isBefore(b, a) { return false }
      return left < right
    }
    return sourceOffsets.map { elements[$0] }
  }

  /// The sorted array's change for the source's `change`, given the sorted elements before it;
  /// `nil` when the sorted array does not change (a move in the source, say).
  ///
  /// An element that stays, and an updated one that still fits between its neighbours, keeps its
  /// row; an updated element that no longer fits moves (with an update) to where a binary search
  /// puts it; inserted elements go after the elements equal to them.
  ///
  /// - Complexity: O(*k* log *n*) comparisons for *k* inserted and updated elements, O(*n*) other
  ///   work (plus the longest-run step of the moves).
  func step(
    _ change: ArrayChangeSet<Element>, sorted old: ArraySnapshot<Element>
  ) -> ArrayChangeSet<Element>? {
    let source = change.elements
    guard !change.isReset else {
      return .reset(from: old.count, to: ArraySnapshot(seed(source)))
    }
    let origins = change.origins()
    let updated = change.updatedFlags()
    var newOffsetOfOld = [Int](repeating: -1, count: change.oldCount)
    for (new, origin) in origins.enumerated() where origin >= 0 { newOffsetOfOld[origin] = new }
    // The source offset after the change of each row, or -1 for a removed one.
    let sourceOffsetAfter = sourceOffsets.map { newOffsetOfOld[$0] }
    // Anchors: rows whose element neither left nor changed; they stay sorted among themselves.
    // nextAnchor[row]: the first anchor after `row`, or -1.
    var nextAnchor = [Int](repeating: -1, count: old.count)
    var anchor = -1
    for row in (0..<old.count).reversed() {
      nextAnchor[row] = anchor
      let offset = sourceOffsetAfter[row]
      if offset >= 0 && !updated[offset] { anchor = row }
    }
    // The rows kept in place, in order, and the elements to place by binary search.
    var keptRows: [Int] = []
    var keptSources: [Int] = []
    var keptElements: [Element] = []
    keptRows.reserveCapacity(old.count)
    keptSources.reserveCapacity(old.count)
    keptElements.reserveCapacity(old.count)
    var entering: [(source: Int, row: Int)] = []
    for row in 0..<old.count {
      let offset = sourceOffsetAfter[row]
      guard offset >= 0 else { continue }
      let element = source[offset]
      if updated[offset] {
        let fitsAfter = keptElements.last.map { !areInIncreasingOrder(element, $0) } ?? true
        let fitsBefore = nextAnchor[row] < 0 || !areInIncreasingOrder(old[nextAnchor[row]], element)
        guard fitsAfter && fitsBefore else {
          entering.append((offset, row))
          continue
        }
      }
      keptRows.append(row)
      keptSources.append(offset)
      keptElements.append(element)
    }
    for (new, origin) in origins.enumerated() where origin < 0 { entering.append((new, -1)) }
    guard
      !entering.isEmpty || keptRows.count != old.count
        || keptSources.contains(where: {
          updated[$0]
        })
    else {
      sourceOffsets = keptSources
      return nil
    }
    let isBefore = areInIncreasingOrder
    entering.sort { left, right in
      let (a, b) = (source[left.source], source[right.source])
      if isBefore(a, b) { return true }
      if isBefore(b, a) { return false }
      return left.source < right.source
    }
    // Merge: each entering element goes after the kept elements not greater than it.
    var elements: [Element] = []
    var rowOrigins: [Int] = []
    var rowUpdated: [Bool] = []
    var offsets: [Int] = []
    let total = keptRows.count + entering.count
    elements.reserveCapacity(total)
    rowOrigins.reserveCapacity(total)
    rowUpdated.reserveCapacity(total)
    offsets.reserveCapacity(total)
    var kept = 0
    func takeKept(upTo end: Int) {
      while kept < end {
        elements.append(keptElements[kept])
        rowOrigins.append(keptRows[kept])
        rowUpdated.append(updated[keptSources[kept]])
        offsets.append(keptSources[kept])
        kept += 1
      }
    }
    for item in entering {
      let element = source[item.source]
      var low = kept
      var high = keptElements.count
      while low < high {
        let middle = (low + high) / 2
        if isBefore(element, keptElements[middle]) { high = middle } else { low = middle + 1 }
      }
      takeKept(upTo: low)
      elements.append(element)
      rowOrigins.append(item.row)
      rowUpdated.append(item.row >= 0)
      offsets.append(item.source)
    }
    takeKept(upTo: keptElements.count)
    sourceOffsets = offsets
    let result = ArrayChangeSet<Element>.build(
      elements: ArraySnapshot(elements), origins: rowOrigins, updated: rowUpdated,
      oldCount: old.count)
    return result.isEmpty ? nil : result
  }
}
