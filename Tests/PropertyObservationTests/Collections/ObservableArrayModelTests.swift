import PropertyObservation
import PropertyObservationTesting
import Testing

struct Item: Identifiable, Equatable, CustomStringConvertible {
  /// Drawn from a small range, so duplicate ids are common.
  var id: Int
  var version: Int

  var description: String { "\(id).\(version)" }
}

/// Checks every change set an array delivers: a replica built only from the change sets, the
/// `CollectionDifference` conversion, and every batch-update stage against the validator.
final class Checker<Element: Equatable & Sendable>: @unchecked Sendable {
  // Only the observer's callback writes these, on the test's thread.
  var replica: [Element] = []
  var problems: [String] = []
  var rounds = 0
  var token: ObservationToken?

  init(_ array: ReadOnlyObservableArray<Element>, label: String) {
    token = array.observe(options: [.initial, .new]) { [unowned self] changes in
      rounds += 1
      let old = replica
      let new = Array(changes.elements)
      replica = changes.applying(to: old)
      if replica != new {
        problems.append("\(label): replica \(replica) != \(new) after \(changes)")
      }
      if old.applying(changes.difference(from: old)) != new {
        problems.append("\(label): CollectionDifference of \(changes) does not rebuild \(new)")
      }
      var rows = old
      for stage in changes.batchUpdates(from: old) {
        for problem in BatchUpdateValidator<Element>.problems(in: stage, appliedTo: rows) {
          problems.append("\(label): \(problem) in \(changes)")
        }
        rows = stage.elements
      }
      if !changes.isEmpty && rows != new { problems.append("\(label): stages end at \(rows)") }
    }
  }
}

@Suite("ObservableArray model")
struct ObservableArrayModelTests {
  @Test func replicasBuiltFromChangeSetsMatchTheArraysAcrossSeededRandomScripts() {
    var failures: [String] = []
    for seed in 0..<2_000 where failures.count < 5 {
      if let failure = runScript(seed: UInt64(seed)) { failures.append("seed \(seed): \(failure)") }
    }
    #expect(failures == [])
  }

  /// Runs one script of random edits; returns the first problem found.
  private func runScript(seed: UInt64) -> String? {
    var edits = RandomEdits(seed: seed)
    let array = ObservableArray((0..<edits.int(below: 8)).map { _ in edits.item() })
    let isEven: @Sendable (Item) -> Bool = { $0.version % 2 == 0 }
    let mapped = array.map { "\($0.id)" }
    let filtered = array.filter(isEven)
    let checkers = (
      Checker<Item>(array, label: "array"), Checker<String>(mapped, label: "map"),
      Checker<Item>(filtered, label: "filter")
    )
    for step in 0..<25 {
      edits.apply(to: array)
      let now = Array(array.elements)
      let problems = checkers.0.problems + checkers.1.problems + checkers.2.problems
      if let problem = problems.first { return "step \(step): \(problem)" }
      if checkers.0.replica != now {
        return "step \(step): replica \(checkers.0.replica) != \(now)"
      }
      if checkers.1.replica != now.map({ "\($0.id)" }) { return "step \(step): map replica" }
      if checkers.2.replica != now.filter(isEven) {
        return "step \(step): filter replica \(checkers.2.replica) != \(now.filter(isEven))"
      }
    }
    if checkers.0.rounds < 2 { return "the script delivered nothing" }
    return nil
  }
}

/// Random edits of an array of items, drawn from a seeded generator: every mutation, edits,
/// transactions, diffs with duplicate ids, resets. Shared by the model tests of the array and
/// of its derived views.
struct RandomEdits {
  var random: SplitMix64
  var version = 0

  init(seed: UInt64) {
    random = SplitMix64(seed: seed)
  }

  mutating func int(below bound: Int) -> Int {
    Int.random(in: 0..<bound, using: &random)
  }

  /// A new item: a fresh version, an id drawn from a small range so duplicates are common.
  mutating func item() -> Item {
    version += 1
    return Item(id: Int.random(in: 0..<12, using: &random), version: version)
  }

  /// Makes one random change to `array`.
  mutating func apply(to array: ObservableArray<Item>) {
    let elements = Array(array.elements)
    let count = elements.count
    func offset(inclusive: Bool = false) -> Int {
      Int.random(in: 0..<(count + (inclusive ? 1 : 0)), using: &random)
    }
    switch Int.random(in: 0..<14, using: &random) {
    case 0: array.append(item())
    case 1:
      array.append(contentsOf: (0..<Int.random(in: 0..<3, using: &random)).map { _ in item() })
    case 2: array.insert(item(), at: offset(inclusive: true))
    case 3: array.insert(contentsOf: [item(), item()], at: offset(inclusive: true))
    case 4 where count > 0: array.remove(at: offset())
    case 5:
      let start = offset(inclusive: true)
      array.removeSubrange(start..<Int.random(in: start...count, using: &random))
    case 6 where count > 0: array.move(from: offset(), to: offset())
    case 7 where count > 0:
      let index = offset()
      version += 1
      array[index] = Item(id: elements[index].id, version: version)
    case 8 where count > 0: array.refresh(at: offset())
    case 9:
      let operations = Int.random(in: 0..<5, using: &random)
      var pending = (0..<operations).map { _ in Int.random(in: 0..<5, using: &random) }
      let fresh = (0..<operations).map { _ in item() }
      array.edit { editor in
        for (kind, element) in zip(pending, fresh) {
          let count = editor.count
          switch kind {
          case 0: editor.insert(element, at: count / 2)
          case 1 where count > 0: editor.remove(at: count - 1)
          case 2 where count > 1: editor.move(from: 0, to: count - 1)
          case 3 where count > 0: editor[count / 2] = element
          default: editor.append(element)
          }
        }
      }
      pending.removeAll()
    case 10:
      withObservationTransaction {
        array.append(item())
        if array.count > 1 { array.move(from: array.count - 1, to: 0) }
        if array.count > 2 { array.remove(at: 1) }
        version += 1
        if array.count > 0 { array[0] = Item(id: array[0].id, version: version) }
      }
    case 11, 12:
      // Keep some, drop some, add some, shuffle, and update some: duplicate ids included.
      var next = elements.filter { _ in Bool.random(using: &random) }
      next.append(contentsOf: (0..<Int.random(in: 0..<4, using: &random)).map { _ in item() })
      next.shuffle(using: &random)
      for index in next.indices where Int.random(in: 0..<4, using: &random) == 0 {
        version += 1
        next[index].version = version
      }
      array.replace(with: next)
    default:
      if Bool.random(using: &random) {
        array.reset(to: (0..<Int.random(in: 0..<5, using: &random)).map { _ in item() })
      } else {
        array.removeAll()
      }
    }
  }
}
