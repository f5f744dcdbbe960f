import Foundation
import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// Edits change the array's storage in place while no snapshot refers to it, and copy it first
/// while one does: each edit still delivers exactly its change set, a kept snapshot never
/// changes, and a registration made at any point starts from elements its later change sets
/// apply to.
@Suite("ObservableArray storage")
struct ObservableArrayStorageTests {
  /// One of each edit, on `Tracked` elements (reference counted, so a slot written twice or
  /// released twice shows), with or without keeping every snapshot.
  @Test(arguments: [false, true])
  func eachEditDeliversItsOwnChangeSetWhetherOrNotASnapshotIsKept(keepsSnapshots: Bool) {
    let array = ObservableArray(["A", "B", "C", "D"].map { Tracked($0) })
    var model = ["A", "B", "C", "D"]
    var kept: [(snapshot: ArraySnapshot<Tracked>, names: [String])] = []
    let log = RecordingLog<String>()
    let token = array.observe { changes in
      log.append("\(changes) \(changes.elements.map(\.name))")
    }
    func check() {
      #expect(array.elements.map(\.name) == model)
      if keepsSnapshots { kept.append((array.elements, model)) }
    }
    array[1] = Tracked("b")
    model[1] = "b"
    check()
    array.insert(Tracked("X"), at: 1)
    model.insert("X", at: 1)
    check()
    array.insert(contentsOf: [Tracked("Y"), Tracked("Z")], at: 5)
    model.insert(contentsOf: ["Y", "Z"], at: 5)
    check()
    #expect(array.remove(at: 0).name == "A")
    model.remove(at: 0)
    check()
    array.removeSubrange(1..<3)
    model.removeSubrange(1..<3)
    check()
    array.move(from: 0, to: 3)
    model.insert(model.remove(at: 0), at: 3)
    check()
    array.move(from: 3, to: 1)
    model.insert(model.remove(at: 3), at: 1)
    check()
    array.append(Tracked("E"))
    model.append("E")
    check()
    array.refresh(at: 0)
    check()
    #expect(
      log.events == [
        #"~[1→1] ["A", "b", "C", "D"]"#,
        #"+[1] ["A", "X", "b", "C", "D"]"#,
        #"+[5, 6] ["A", "X", "b", "C", "D", "Y", "Z"]"#,
        #"-[0] ["X", "b", "C", "D", "Y", "Z"]"#,
        #"-[1, 2] ["X", "D", "Y", "Z"]"#,
        #"↷[0→3] ["D", "Y", "Z", "X"]"#,
        #"↷[3→1] ["D", "X", "Y", "Z"]"#,
        #"+[4] ["D", "X", "Y", "Z", "E"]"#,
        #"~[0→0] ["D", "X", "Y", "Z", "E"]"#,
      ])
    for (snapshot, names) in kept {
      #expect(snapshot.map(\.name) == names)
    }
    token.cancel()
  }

  /// An observer that keeps only some change sets: the kept ones must show the elements of
  /// their own change while the array is edited around them, in place or not.
  @MainActor @Test func keptChangeSetsNeverChangeWhileLaterEditsRunInPlace() {
    let array = ObservableArray(Array(0..<8))
    var model = Array(0..<8)
    var kept: [(changes: ArrayChangeSet<Int>, elements: [Int])] = []
    var round = 0
    let token = array.observe { changes in
      round += 1
      // Kept only every third change set, so the others find the storage unshared.
      if round % 3 == 0 { kept.append((changes, Array(changes.elements))) }
    }
    for step in 0..<30 {
      switch step % 5 {
      case 0:
        array[step % model.count] = 100 + step
        model[step % model.count] = 100 + step
      case 1:
        array.insert(200 + step, at: step % (model.count + 1))
        model.insert(200 + step, at: step % (model.count + 1))
      case 2:
        array.remove(at: step % model.count)
        model.remove(at: step % model.count)
      case 3:
        let (source, destination) = (step % model.count, (step * 7) % model.count)
        array.move(from: source, to: destination)
        model.insert(model.remove(at: source), at: destination)
      default:
        array.edit { $0[0] += 1 }
        model[0] += 1
      }
      #expect(Array(array.elements) == model)
    }
    #expect(kept.count == round / 3)
    for (changes, elements) in kept {
      #expect(Array(changes.elements) == elements)
    }
    token.cancel()
  }

  @Test func movingAnElementToItsOwnOffsetDeliversNothing() {
    let array = ObservableArray(["A", "B"])
    let log = ChangeLog(array, options: [.new])
    array.move(from: 1, to: 1)
    array.move(from: 0, to: 1)
    #expect(log.descriptions == ["↷[0→1]"])
    #expect(log.replica == ["B", "A"])
  }

  @Test func anEditThatChangesNothingDeliversAnEmptyChangeSetAndKeepsTheElements() {
    let array = ObservableArray(["A", "B"])
    let log = ChangeLog(array, options: [.new])
    array.edit { _ in }
    array.edit { $0.move(from: 1, to: 1) }
    #expect(log.descriptions == ["no change", "no change"])
    #expect(Array(array.elements) == ["A", "B"])
  }

  @Test func aRegistrationAfterInPlaceEditsStartsFromTheCurrentElements() {
    let array = ObservableArray(["A", "B", "C"])
    array[0] = "a"
    array.remove(at: 1)
    array.insert("X", at: 0)
    let log = ChangeLog(array)
    array.move(from: 2, to: 0)
    #expect(log.descriptions == ["reset +[0, 1, 2]", "↷[2→0]"])
    #expect(log.replica == ["C", "X", "a"])
    let values = array.asObservable()
    let recorded = RecordingLog<String>()
    let token = values.observe(options: [.initial, .new]) { value, _ in
      recorded.append("\(value)")
    }
    array[1] = "x"
    #expect(recorded.events == [#"["C", "X", "a"]"#, #"["C", "x", "a"]"#])
    token.cancel()
  }

  /// The transaction's merged change set applies to the elements before it, so a registration
  /// made inside the transaction must start from those, although the storage changed meanwhile.
  @Test func aRegistrationInsideATransactionStartsFromTheElementsBeforeIt() {
    let array = ObservableArray(["A", "B", "C"])
    array[0] = "a"
    var log: ChangeLog<String>?
    withObservationTransaction {
      array[1] = "b"
      array.remove(at: 2)
      log = ChangeLog(array)
      array.insert("X", at: 0)
    }
    #expect(log?.descriptions == ["reset +[0, 1, 2]", "-[2] +[0] ~[1→2]"])
    #expect(log?.replica == ["X", "a", "b"])
    array.move(from: 0, to: 2)
    #expect(log?.replica == ["a", "b", "X"])
  }

  /// Registered while the array's change sets are being delivered: it starts from the elements
  /// of the change set being delivered, and receives the change made inside that callback.
  @MainActor @Test func aRegistrationInsideACallbackStartsWhereTheNextChangeSetApplies() {
    let array = ObservableArray([1, 2])
    var inner: ChangeLog<Int>?
    let outer = array.observe { changes in
      guard inner == nil else { return }
      array[0] = 10
      inner = ChangeLog(array)
    }
    array.append(3)
    array.remove(at: 1)
    #expect(inner?.descriptions == ["reset +[0, 1, 2]", "~[0→0]", "-[1]"])
    #expect(inner?.replica == [10, 3])
    outer.cancel()
  }

  @MainActor
  @Test func aBoundTargetGetsEachEditAsAValidBatch() {
    let array = ObservableArray(Array("ABCD"))
    let table = BatchUpdateValidator<Character>()
    array.bind(to: table)
    array[1] = "b"
    array.insert("X", at: 0)
    array.remove(at: 2)
    array.move(from: 0, to: 2)
    array.append("E")
    array.edit {
      $0.remove(at: 0)
      $0[0] = "c"
      $0.append("F")
    }
    #expect(
      table.log == [
        "reloadAll(4)", "batch(~[1])", "batch(+[0])", "batch(-[2])", "batch(↷[0→2])",
        "batch(+[4])", "batch(~[1])", "batch(-[0])", "batch(+[4])",
      ])
    #expect(table.problems.isEmpty)
    #expect(table.rows == Array(array.elements))
    #expect(table.rows == Array("cXDEF"))
  }

  /// Every element the array took is released exactly once, whichever way it left.
  @Test func everyElementIsReleasedOnceAfterInPlaceEdits() {
    let live = LiveCount()
    do {
      let array = ObservableArray((0..<6).map { Tracked("\($0)", countedIn: live) })
      array[0] = Tracked("a", countedIn: live)
      array.insert(Tracked("b", countedIn: live), at: 3)
      array.remove(at: 1)
      array.removeSubrange(0..<2)
      array.move(from: 0, to: 2)
      let kept = array.elements
      array[0] = Tracked("c", countedIn: live)
      array.append(Tracked("d", countedIn: live))
      #expect(kept.map(\.name) == ["3", "4", "b", "5"])
      #expect(array.elements.map(\.name) == ["c", "4", "b", "5", "d"])
      #expect(live.value == 6)
    }
    #expect(live.value == 0)
  }
}

/// A reference-counted element that can count its live instances in a ``LiveCount``.
///
/// Each test that counts has a count of its own: tests run in parallel, and a count shared by
/// every `Tracked` would see another test's elements.
final class Tracked: Sendable {
  let name: String
  private let liveCount: LiveCount?

  init(_ name: String, countedIn liveCount: LiveCount? = nil) {
    self.name = name
    self.liveCount = liveCount
    liveCount?.add(1)
  }

  deinit {
    liveCount?.add(-1)
  }
}

/// How many `Tracked` elements made with it are alive.
///
/// `@unchecked Sendable`: `count` is read and written only with `lock` held.
final class LiveCount: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0

  var value: Int {
    lock.withLock { count }
  }

  func add(_ delta: Int) {
    lock.withLock { count += delta }
  }
}
