import PropertyObservation
import Testing

/// The sorted view, the filter by a changing query and the element by id under random scripts:
/// each view's replica, rebuilt from the change sets it delivered alone (and checked stage by
/// stage against UIKit's rules), must equal the view recomputed from scratch from the array after
/// every step; the element by id must equal the element an independent follower finds.
@Suite("Derived views model")
struct DerivedViewModelTests {
  @Test func viewsRebuiltFromChangeSetsMatchTheViewsRecomputedFromScratch() {
    var failures: [String] = []
    for seed in 0..<1_000 where failures.count < 5 {
      if let failure = runScript(seed: UInt64(seed)) { failures.append("seed \(seed): \(failure)") }
    }
    #expect(failures == [])
  }

  /// Runs one script of random edits and query changes; returns the first problem found.
  private func runScript(seed: UInt64) -> String? {
    var edits = RandomEdits(seed: seed)
    let array = ObservableArray((0..<edits.int(below: 8)).map { _ in edits.item() })
    let query = Observable(6)
    // A total order: the view is exactly the sorted array.
    let isBefore: @Sendable (Item, Item) -> Bool = {
      ($0.id, $0.version) < ($1.id, $1.version)
    }
    let sorted = array.sorted(by: isBefore)
    // Ties: the view is sorted by id and holds the same items.
    let byID = array.sorted { $0.id < $1.id }
    let isIncluded: @Sendable (Item, Int) -> Bool = { item, limit in item.id < limit }
    let searched = array.filter(by: query, isIncluded)
    // A chain: sorting a filter by a query.
    let sortedSearch = searched.sorted(by: isBefore)
    let followedID = array.elements.first?.id ?? 0
    let followed = array.element(withID: followedID)
    let oracle = Follower(array, id: followedID)
    let checkers = (
      Checker<Item>(sorted, label: "sorted"), Checker<Item>(byID, label: "sorted by id"),
      Checker<Item>(searched, label: "filter(by:)"),
      Checker<Item>(sortedSearch, label: "sorted filter(by:)")
    )
    for step in 0..<30 {
      if edits.int(below: 4) == 0 {
        query.value = edits.int(below: 13)
      } else {
        edits.apply(to: array)
      }
      let now = Array(array.elements)
      let problems =
        checkers.0.problems + checkers.1.problems + checkers.2.problems + checkers.3.problems
      if let problem = problems.first { return "step \(step): \(problem)" }
      let expectedSorted = now.sorted(by: isBefore)
      if checkers.0.replica != expectedSorted {
        return "step \(step): sorted \(checkers.0.replica) != \(expectedSorted)"
      }
      let byIDReplica = checkers.1.replica
      if zip(byIDReplica, byIDReplica.dropFirst()).contains(where: { $0.id > $1.id })
        || byIDReplica.sorted(by: isBefore) != expectedSorted
      {
        return "step \(step): sorted by id \(byIDReplica) is not a sorting of \(now)"
      }
      let expectedSearch = now.filter { isIncluded($0, query.value) }
      if checkers.2.replica != expectedSearch {
        return "step \(step): filter(by:) \(checkers.2.replica) != \(expectedSearch)"
      }
      if checkers.3.replica != expectedSearch.sorted(by: isBefore) {
        return "step \(step): sorted filter(by:) \(checkers.3.replica)"
      }
      if followed.value != oracle.element {
        return "step \(step): element(withID:) \(String(describing: followed.value))"
          + " != \(String(describing: oracle.element))"
      }
    }
    if checkers.0.rounds < 2 || checkers.2.rounds < 2 { return "the script delivered nothing" }
    return nil
  }
}

/// Follows one element by id the slow, independent way: through each change set's full
/// matching, replayed with `applying(to:)` on markers that stand for the old offsets, for
/// comparison with `element(withID:)`.
private final class Follower: @unchecked Sendable {
  // Only the observer's callback touches these, on the test's thread.
  private(set) var element: Item?
  private var offset: Int?
  private var hasEnded = false
  private var token: ObservationToken?

  init(_ array: ObservableArray<Item>, id: Int) {
    token = array.observe(options: [.initial, .new]) { [unowned self] changes in
      guard !hasEnded else { return }
      let elements = Array(changes.elements)
      if changes.isReset {
        offset = elements.firstIndex { $0.id == id }
      } else if let old = offset {
        // Old element k is the marker with id -1 - k; updated elements come from the updates.
        let markers = (0..<changes.oldCount).map { Item(id: -1 - $0, version: -1) }
        var origins = changes.applying(to: markers).map { $0.version == -1 ? -1 - $0.id : -1 }
        for update in changes.updates { origins[update.new] = update.old }
        offset = origins.firstIndex(of: old)
      }
      guard let offset, elements[offset].id == id else {
        hasEnded = true
        element = nil
        return
      }
      element = elements[offset]
    }
  }
}
