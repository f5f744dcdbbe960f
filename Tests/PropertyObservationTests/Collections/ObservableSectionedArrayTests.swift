import PropertyObservation
import PropertyObservationTesting
import Testing

/// A section's model in these tests: an id and a title, shown in its header.
struct Group: Identifiable, Equatable, CustomStringConvertible {
  var id: String
  var title = ""

  var description: String { title.isEmpty ? id : "\(id)(\(title))" }
}

/// An item in these tests: an id and a version, which a reload changes.
struct Row: Identifiable, Equatable, CustomStringConvertible {
  var id: Int
  var version = 0

  var description: String { version == 0 ? "\(id)" : "\(id).\(version)" }
}

/// Records what a sectioned list delivers: each change set's description, and a replica that
/// takes each stage's sections only after the validator has judged the stage against it.
final class SectionedLog: @unchecked Sendable {
  // Only the observer's callback touches these, one call at a time.
  private(set) var descriptions: [String] = []
  private(set) var replica: [ArraySection<Group, Row>] = []
  private(set) var problems: [String] = []
  var token: ObservationToken?

  init(
    _ list: ObservableSectionedArray<Group, Row>, options: ObservableOptions = [.initial, .new]
  ) {
    if !options.contains(.initial) { replica = list.sections }
    token = list.observe(options: options) { [unowned self] changes in
      descriptions.append(changes.description)
      if changes.isReset { replica = changes.sections }
      for stage in changes.stages {
        problems += SectionedBatchUpdateValidator.problems(in: stage, appliedTo: replica)
        replica = stage.sections
      }
      if replica != changes.sections { problems.append("stages end at \(replica)") }
    }
  }
}

func sections(_ layout: KeyValuePairs<String, [Int]>) -> [ArraySection<Group, Row>] {
  layout.map { ArraySection(model: Group(id: $0.key), items: $0.value.map { Row(id: $0) }) }
}

@Suite("ObservableSectionedArray")
struct ObservableSectionedArrayTests {
  @Test func initialDeliversAResetToTheSectionsInsideTheRegisteringCall() {
    let list = ObservableSectionedArray(sections(["A": [1, 2], "B": [3]]))
    let log = SectionedLog(list)
    #expect(log.descriptions == ["reset(2 sections)"])
    #expect(log.replica == list.sections)
  }

  @Test func eachEditDeliversWhatItDid() {
    let list = ObservableSectionedArray(sections(["A": [1, 2], "B": [3]]))
    let log = SectionedLog(list, options: [.new])
    list.insert(Row(id: 4), at: ItemPath(section: 1, item: 0))
    list.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 2))
    list.moveItem(from: ItemPath(section: 1, item: 0), to: ItemPath(section: 1, item: 1))
    list.updateItem(Row(id: 2, version: 1), at: ItemPath(section: 0, item: 0))
    #expect(list.removeItem(at: ItemPath(section: 1, item: 0)) == Row(id: 3))
    list.insertSection(ArraySection(model: Group(id: "C"), items: [Row(id: 5)]), at: 0)
    list.moveSection(from: 2, to: 0)
    list.updateSection(Group(id: "A", title: "Inbox"), at: 2)
    #expect(list.removeSection(at: 0).model == Group(id: "B"))
    #expect(
      log.descriptions == [
        "+[[1, 0]]",
        "↷[[0, 0]→[1, 2]]",
        "↷[[1, 0]→[1, 1]]",
        "~[[0, 0]]",
        "-[[1, 0]]",
        "s+[0]",
        "s↷[2→0]",
        "s~[2]",
        "s-[0]",
      ])
    #expect(log.problems == [])
    #expect(log.replica == list.sections)
    #expect(
      log.replica == [
        ArraySection(model: Group(id: "C"), items: [Row(id: 5)]),
        ArraySection(model: Group(id: "A", title: "Inbox"), items: [Row(id: 2, version: 1)]),
      ])
  }

  @Test func anEditThatChangesNothingDeliversNothing() {
    let list = ObservableSectionedArray(sections(["A": [1, 2], "B": [3]]))
    let log = SectionedLog(list, options: [.new])
    list.moveSection(from: 1, to: 1)
    list.moveItem(from: ItemPath(section: 0, item: 1), to: ItemPath(section: 0, item: 1))
    list.replace(with: sections(["A": [1, 2], "B": [3]]))
    #expect(log.descriptions == [])
  }

  @Test func replaceStagesSectionsAndItemsByIdentityForUIKit() {
    let list = ObservableSectionedArray(sections(["A": [1, 2, 3], "B": [4, 5], "C": [6, 7]]))
    let log = SectionedLog(list, options: [.new])
    // B is deleted (taking 4 with it, although 4 reappears in A); D is inserted with 8; A and
    // C swap; 2 moves from A to C; 3 and 1 swap within A; 7 is updated; A's title changes.
    var new: [ArraySection<Group, Row>] = [
      ArraySection(model: Group(id: "C"), items: [Row(id: 6), Row(id: 2), Row(id: 7, version: 1)]),
      ArraySection(model: Group(id: "D"), items: [Row(id: 8)]),
      ArraySection(
        model: Group(id: "A", title: "Inbox"), items: [Row(id: 3), Row(id: 1), Row(id: 4)]),
    ]
    list.replace(with: new)
    new[1].items.append(Row(id: 9))
    list.replace(with: new)
    #expect(
      log.descriptions == [
        // Reload 7 and delete B (its items with it); insert D and move C before A; insert 4
        // into A, move 2 across to C and 3 within A; reload A's header.
        "s-[1] ~[[2, 1]] | s+[1] s↷[1→0]"
          + " | +[[2, 2]] ↷[[2, 1]→[0, 1], [2, 2]→[2, 0]] | s~[2]",
        "+[[1, 1]]",
      ])
    #expect(log.problems == [])
    #expect(log.replica == new)
  }

  @Test func changesMergedByATransactionArriveAsAReset() {
    let list = ObservableSectionedArray(sections(["A": [1]]))
    let log = SectionedLog(list, options: [.new])
    withObservationTransaction {
      list.insert(Row(id: 2), at: ItemPath(section: 0, item: 1))
      list.insertSection(ArraySection(model: Group(id: "B")), at: 1)
    }
    list.removeSection(at: 1)
    #expect(log.descriptions == ["reset(2 sections)", "s-[1]"])
    #expect(log.replica == sections(["A": [1, 2]]))
  }

  @MainActor @Test func aBoundTargetReceivesEveryStageAndPassesTheValidator() {
    let list = ObservableSectionedArray(sections(["A": [1, 2], "B": [3]]))
    let table = SectionedBatchUpdateValidator<Group, Row>()
    list.bind(to: table)
    list.replace(with: sections(["B": [3, 1], "A": [2]]))
    list.removeItem(at: ItemPath(section: 0, item: 0))
    #expect(
      table.log == [
        "reloadAll(2)", "batch(s↷[1→0])", "batch(↷[[1, 0]→[0, 1]])", "batch(-[[0, 0]])",
      ])
    #expect(table.problems == [])
    #expect(table.sections == list.sections)
    list.removeObserver(table)
    list.removeSection(at: 0)
    #expect(table.log.count == 4)
  }

  @Test func theValidatorReportsWhatUIKitWouldRefuse() {
    typealias Batch = SectionedBatchUpdate<Group, Row>
    typealias Validator = SectionedBatchUpdateValidator<Group, Row>
    let old = sections(["A": [1, 2], "B": [3]])
    func move(_ old: (Int, Int), _ new: (Int, Int)) -> Batch.ItemMove {
      Batch.ItemMove(
        old: ItemPath(section: old.0, item: old.1), new: ItemPath(section: new.0, item: new.1))
    }
    let deletingInADeletedSection = Batch(
      sectionDeletions: [1], itemDeletions: [ItemPath(section: 1, item: 0)],
      sections: sections(["A": [1, 2]]))
    let insertingWithoutData = Batch(itemInsertions: [ItemPath(section: 0, item: 0)], sections: old)
    let movingASectionAndShufflingItsItems = Batch(
      sectionMoves: [Batch.SectionMove(old: 1, new: 0)],
      sections: sections(["B": [3], "A": [2, 1]]))
    let reloadingAMovedItem = Batch(
      itemReloads: [ItemPath(section: 0, item: 0)], itemMoves: [move((0, 0), (1, 1))],
      sections: sections(["A": [2], "B": [3, 1]]))
    let countingSectionsWrong = Batch(sections: old + sections(["C": []]))
    #expect(
      [
        deletingInADeletedSection, insertingWithoutData, movingASectionAndShufflingItsItems,
        reloadingAMovedItem, countingSectionsWrong,
      ].map { Validator.problems(in: $0, appliedTo: old) } == [
        ["item [1, 0] is in a deleted or reloaded section"],
        ["section 0 would have 3 items after the batch; the data source has 2"],
        [
          "item [1, 0] shows 1 after the batch; the data source has 2",
          "item [1, 1] shows 2 after the batch; the data source has 1",
        ],
        ["[0, 0] is an item reloaded and moved"],
        ["2 sections - 0 deleted + 0 inserted is not the 3 sections after the batch"],
      ])
  }
}
