import Dispatch
import PropertyObservation
import PropertyObservationTesting
import Testing

@Suite("ObservableSectionedArray model")
struct ObservableSectionedArrayModelTests {
  @Test func replicasBuiltFromChangeSetsMatchTheListAcrossSeededRandomScripts() {
    var failures: [String] = []
    var changeSets = 0
    for seed in 0..<1_000 where failures.count < 5 {
      switch runScript(seed: UInt64(seed)) {
      case .success(let count): changeSets += count
      case .failure(let failure): failures.append("seed \(seed): \(failure.message)")
      }
    }
    #expect(failures == [])
    // The scripts deliver change sets with stages, not only resets.
    #expect(changeSets > 10_000)
  }

  @Test func editsFromSeveralThreadsReachAnObserverInOrder() {
    let list = ObservableSectionedArray(sections(["A": [], "B": []]))
    let log = SectionedLog(list)
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for step in 0..<50 {
        let row = Row(id: thread * 100 + step)
        list.insert(row, at: ItemPath(section: step % 2, item: 0))
        if step % 5 == 4 {
          list.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))
        }
      }
    }
    #expect(log.problems == [])
    #expect(log.replica == list.sections)
    #expect(list.sections.map(\.items.count).reduce(0, +) == 200)
  }

  struct ScriptFailure: Error {
    let message: String
  }

  /// Runs one script of random edits, mirrored on a plain array of sections; returns how many
  /// change sets it delivered, or the first problem found.
  private func runScript(seed: UInt64) -> Result<Int, ScriptFailure> {
    var edits = RandomSectionEdits(seed: seed)
    var model = edits.layout()
    let list = ObservableSectionedArray(model)
    let log = SectionedLog(list)
    for step in 0..<30 {
      edits.apply(to: list, mirroring: &model)
      if let problem = log.problems.first {
        return .failure(ScriptFailure(message: "step \(step): \(problem)"))
      }
      guard list.sections == model else {
        return .failure(ScriptFailure(message: "step \(step): \(list.sections) != \(model)"))
      }
      guard log.replica == model else {
        return .failure(ScriptFailure(message: "step \(step): replica \(log.replica) != \(model)"))
      }
    }
    return .success(log.descriptions.count)
  }
}

/// Random edits of a sectioned list, drawn from a seeded generator: every direct edit, replaces
/// that shuffle items across sections, and transactions. Ids come from small ranges, so
/// duplicate ids (of sections and of items) are common.
struct RandomSectionEdits {
  var random: SplitMix64
  var version = 0

  init(seed: UInt64) {
    random = SplitMix64(seed: seed)
  }

  mutating func int(below bound: Int) -> Int {
    Int.random(in: 0..<bound, using: &random)
  }

  mutating func row() -> Row {
    version += 1
    return Row(id: int(below: 12), version: version)
  }

  mutating func group() -> Group {
    Group(id: ["A", "B", "C", "D", "E"][int(below: 5)], title: int(below: 3) == 0 ? "t" : "")
  }

  mutating func section() -> ArraySection<Group, Row> {
    ArraySection(model: group(), items: (0..<int(below: 4)).map { _ in row() })
  }

  mutating func layout() -> [ArraySection<Group, Row>] {
    (0..<int(below: 4)).map { _ in section() }
  }

  /// A new layout made from `sections`: items kept, updated, dropped, added and shuffled
  /// across sections, sections kept, retitled, dropped, added and reordered.
  mutating func variation(of sections: [ArraySection<Group, Row>]) -> [ArraySection<Group, Row>] {
    var pool = sections.flatMap(\.items)
    pool.shuffle(using: &random)
    var result: [ArraySection<Group, Row>] = []
    for var section in sections where int(below: 5) > 0 {
      if int(below: 4) == 0 { section.model.title = section.model.title.isEmpty ? "t" : "" }
      section.items = []
      result.append(section)
    }
    if int(below: 3) == 0 { result.insert(section(), at: int(below: result.count + 1)) }
    result.shuffle(using: &random)
    guard !result.isEmpty else { return result }
    for var item in pool where int(below: 6) > 0 {
      if int(below: 4) == 0 { item.version = -item.version }
      result[int(below: result.count)].items.append(item)
    }
    for _ in 0..<int(below: 3) { result[int(below: result.count)].items.append(row()) }
    return result
  }

  /// Makes one random change to `list`, and the same to `model`.
  mutating func apply(
    to list: ObservableSectionedArray<Group, Row>, mirroring model: inout [ArraySection<Group, Row>]
  ) {
    let count = model.count
    func path(in sections: [ArraySection<Group, Row>], inclusive: Bool) -> ItemPath? {
      let candidates = sections.indices.filter { inclusive || !sections[$0].items.isEmpty }
      guard let section = candidates.randomElement(using: &random) else { return nil }
      let items = sections[section].items.count + (inclusive ? 1 : 0)
      return ItemPath(section: section, item: int(below: items))
    }
    switch int(below: 12) {
    case 0:
      let new = section()
      let index = int(below: count + 1)
      list.insertSection(new, at: index)
      model.insert(new, at: index)
    case 1 where count > 0:
      let index = int(below: count)
      list.removeSection(at: index)
      model.remove(at: index)
    case 2 where count > 0:
      let (source, destination) = (int(below: count), int(below: count))
      list.moveSection(from: source, to: destination)
      model.insert(model.remove(at: source), at: destination)
    case 3 where count > 0:
      let index = int(below: count)
      var updated = model[index].model
      updated.title += "!"
      list.updateSection(updated, at: index)
      model[index].model = updated
    case 4:
      guard let target = path(in: model, inclusive: true) else { break }
      let new = row()
      list.insert(new, at: target)
      model[target.section].items.insert(new, at: target.item)
    case 5:
      guard let source = path(in: model, inclusive: false) else { break }
      list.removeItem(at: source)
      model[source.section].items.remove(at: source.item)
    case 6, 7:
      guard let source = path(in: model, inclusive: false) else { break }
      var after = model
      let item = after[source.section].items.remove(at: source.item)
      guard let target = path(in: after, inclusive: true) else { break }
      list.moveItem(from: source, to: target)
      after[target.section].items.insert(item, at: target.item)
      model = after
    case 8:
      guard let target = path(in: model, inclusive: false) else { break }
      var item = model[target.section].items[target.item]
      item.version = -item.version - 1
      list.updateItem(item, at: target)
      model[target.section].items[target.item] = item
    case 9:
      let new = layout()
      list.replace(with: new)
      model = new
    case 10:
      withObservationTransaction {
        let new = variation(of: model)
        list.replace(with: new)
        model = new
        guard let target = path(in: model, inclusive: true) else { return }
        let inserted = row()
        list.insert(inserted, at: target)
        model[target.section].items.insert(inserted, at: target.item)
      }
    default:
      let new = variation(of: model)
      list.replace(with: new)
      model = new
    }
  }
}
