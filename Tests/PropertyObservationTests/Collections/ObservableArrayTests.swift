import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// Records the change sets an array delivers, as their descriptions, and a replica built only
/// from them.
final class ChangeLog<Element>: @unchecked Sendable {
  // Only the observer's callback touches these, one call at a time (the core's rounds never
  // overlap for one registration); the test reads them after the deliveries it waits for.
  private(set) var descriptions: [String] = []
  private(set) var replica: [Element] = []
  private(set) var changeSets: [ArrayChangeSet<Element>] = []
  var token: ObservationToken?

  init(_ array: ReadOnlyObservableArray<Element>, options: ObservableOptions = [.initial, .new]) {
    if !options.contains(.initial) { replica = Array(array.elements) }
    token = array.observe(options: options) { [unowned self] changes in
      descriptions.append(changes.description)
      replica = changes.applying(to: replica)
      changeSets.append(changes)
    }
  }
}

@Suite("ObservableArray")
struct ObservableArrayTests {
  @Test func initialInsertsEveryElementInsideTheRegisteringCall() {
    let todos = ObservableArray(["Milk", "Eggs"])
    let log = ChangeLog(todos)
    #expect(log.descriptions == ["reset +[0, 1]"])
    #expect(log.replica == ["Milk", "Eggs"])
  }

  @Test func eachMutationDeliversItsOwnChangeSet() {
    let todos = ObservableArray(["A", "B", "C"])
    let log = ChangeLog(todos, options: [.new])
    todos.append("D")
    todos.append(contentsOf: ["E", "F"])
    todos.insert("X", at: 0)
    todos.insert(contentsOf: ["Y", "Z"], at: 2)
    #expect(todos.remove(at: 1) == "A")
    todos.removeSubrange(1..<3)
    todos.move(from: 0, to: 3)
    todos[0] = "b"
    todos.refresh(at: 1)
    todos.removeAll()
    #expect(
      log.descriptions == [
        "+[3]", "+[4, 5]", "+[0]", "+[2, 3]", "-[1]", "-[1, 2]", "↷[0→3]", "~[0→0]", "~[1→1]",
        "-[0, 1, 2, 3, 4, 5]",
      ])
    #expect(log.replica == [])
  }

  @Test func aChangeSetKeepsItsSnapshotAfterLaterMutations() {
    let todos = ObservableArray([1, 2, 3])
    let log = ChangeLog(todos, options: [.new])
    todos.append(4)
    todos.append(5)
    todos[0] = 10
    todos.remove(at: 1)
    #expect(
      log.changeSets.map { Array($0.elements) } == [
        [1, 2, 3, 4], [1, 2, 3, 4, 5], [10, 2, 3, 4, 5], [10, 3, 4, 5],
      ])
  }

  @Test func reserveCapacityDeliversNothingAndKeepsEarlierSnapshots() {
    let numbers = ObservableArray([1, 2])
    let before = numbers.elements
    let log = ChangeLog(numbers, options: [.new])
    numbers.reserveCapacity(100)
    #expect(log.descriptions.isEmpty)
    for value in 3...50 { numbers.append(value) }
    #expect(Array(before) == [1, 2])
    #expect(Array(numbers.elements) == Array(1...50))
    #expect(log.replica == Array(1...50))
  }

  @Test func anEditDeliversOneChangeSetWithMinimalMoves() {
    let todos = ObservableArray(Array("ABCD"))
    let log = ChangeLog(todos, options: [.new])
    let removed = todos.edit { todos in
      todos.move(from: 0, to: 3)
      todos.append("E")
      todos[0] = "b"
      return todos.remove(at: 1)
    }
    #expect(removed == "C")
    #expect(log.descriptions == ["-[2] +[3] ↷[0→2] ~[1→0]"])
    #expect(Array(todos.elements) == Array("bDAE"))
    #expect(log.replica == Array("bDAE"))
  }

  @Test func anEditThatThrowsChangesNothing() {
    struct Stop: Error {}
    let todos = ObservableArray([1])
    let log = ChangeLog(todos, options: [.new])
    #expect(throws: Stop.self) {
      try todos.edit { todos in
        todos.append(2)
        throw Stop()
      }
    }
    #expect(Array(todos.elements) == [1])
    #expect(log.descriptions.isEmpty)
  }

  @Test func replaceDiffsByIdAndNeverTrapsOnDuplicates() {
    struct Todo: Identifiable, Equatable {
      var id: String
      var isDone = false
    }
    let todos = ObservableArray(["a", "b", "b", "c"].map { Todo(id: $0) })
    let log = ChangeLog(todos, options: [.new])
    todos.replace(with: [Todo(id: "c"), Todo(id: "b", isDone: true), Todo(id: "a"), Todo(id: "b")])
    #expect(log.changeSets.count == 1)
    #expect(log.replica == Array(todos.elements))
    #expect(log.changeSets[0].updates == [.init(old: 1, new: 1)])
    #expect(log.changeSets[0].moves.count == 2)
  }

  @Test func resetRemovesAndInsertsEverything() {
    let todos = ObservableArray([1, 2])
    let log = ChangeLog(todos, options: [.new])
    todos.reset(to: [3])
    #expect(log.descriptions == ["reset -[0, 1] +[0]"])
    #expect(log.replica == [3])
  }

  @Test func aTransactionMergesAnArraysMutationsIntoOneChangeSet() {
    let todos = ObservableArray(Array("ABC"))
    let name = Observable("x")
    let log = ChangeLog(todos, options: [.new])
    withObservationTransaction {
      todos.append("D")
      todos.remove(at: 0)
      name.value = "y"
      todos.move(from: 2, to: 0)
      #expect(log.descriptions.isEmpty)
      #expect(Array(todos.elements) == Array("DBC"))
    }
    #expect(log.descriptions == ["-[0] +[0]"])
    #expect(log.replica == Array("DBC"))
  }

  @Test func anotherThreadsChangeDuringATransactionJoinsItsChangeSet() async {
    await onItsOwnThread {
      let numbers = ObservableArray([1])
      let log = ChangeLog(numbers, options: [.new])
      withObservationTransaction {
        numbers.append(2)
        let writer = runInBackground { numbers.insert(0, at: 0) }
        #expect(writer.waitUntilFinished("the writer"))
        numbers.append(3)
        #expect(log.descriptions.isEmpty)
      }
      #expect(log.descriptions == ["+[0, 2, 3]"])
      #expect(log.replica == [0, 1, 2, 3])
    }
  }

  @Test func aDerivedArrayObservedInsideATransactionDeliversEachChangeOnce() {
    let source = ObservableArray([1, 2])
    var log: ChangeLog<Int>?
    withObservationTransaction {
      source.append(3)
      let doubled = source.map { $0 * 2 }
      log = ChangeLog(doubled)
      source.append(4)
    }
    #expect(log?.descriptions == ["reset +[0, 1]", "+[2, 3]"])
    #expect(log?.replica == [2, 4, 6, 8])
  }

  @Test func aMutationInsideACallbackIsDeliveredAfterTheCurrentChangeSet() {
    let numbers = ObservableArray([Int]())
    let log = RecordingLog<String>()
    let token = numbers.observe { changes in
      log.append("\(changes) \(Array(changes.elements))")
      if changes.elements.count < 3 { numbers.append(changes.elements.count) }
      log.append("end \(changes.elements.count)")
    }
    numbers.append(0)
    #expect(
      log.events == [
        "+[0] [0]", "end 1", "+[1] [0, 1]", "end 2", "+[2] [0, 1, 2]", "end 3",
      ])
    token.cancel()
  }

  @Test func asObservableDeliversOldAndNewArrays() {
    let todos = ObservableArray(["A"])
    let array = todos.asObservable()
    let log = RecordingLog<String>()
    let token = array.observe(options: [.initial, .old, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    todos.append("B")
    #expect(log.events == [#"[.initial] ["A"]"#, #"[.old] ["A"]"#, #"[.new] ["A", "B"]"#])
    token.cancel()
  }

  @Test func mapTransformsOnlyInsertedAndUpdatedElements() {
    let source = ObservableArray([1, 2, 3])
    let calls = RecordingLog<Int>()
    let doubled = source.map { value in
      calls.append(value)
      return value * 2
    }
    let log = ChangeLog(doubled)
    source.append(4)
    source.move(from: 0, to: 3)
    source.remove(at: 0)
    source[0] = 30
    #expect(calls.events == [1, 2, 3, 4, 30])
    #expect(Array(doubled.elements) == [60, 8, 2])
    #expect(log.descriptions == ["reset +[0, 1, 2]", "+[3]", "↷[0→3]", "-[0]", "~[0→0]"])
    #expect(log.replica == [60, 8, 2])
  }

  @Test func filterKeepsMembershipUntilAnUpdateMovesAnElementInOrOut() {
    let source = ObservableArray([1, 2, 3, 4])
    let calls = RecordingLog<Int>()
    let even = source.filter { value in
      calls.append(value)
      return value % 2 == 0
    }
    let log = ChangeLog(even)
    source.append(6)  // in: an insertion
    source.append(7)  // out: nothing delivered
    source[0] = 8  // 1 → 8 enters: an insertion
    source[1] = 5  // 2 → 5 leaves: a removal
    source[3] = 10  // 4 → 10 stays: an update
    source.move(from: 0, to: 5)
    #expect(calls.events == [1, 2, 3, 4, 6, 7, 8, 5, 10])
    #expect(log.descriptions == ["reset +[0, 1]", "+[2]", "+[0]", "-[1]", "~[1→1]", "↷[0→2]"])
    #expect(Array(even.elements) == [10, 6, 8])
    #expect(log.replica == [10, 6, 8])
  }

  @Test func aDerivedArrayChangesInsideTheSourcesRound() {
    let source = ObservableArray([1])
    let mapped = source.map { $0 * 10 }
    let log = RecordingLog<String>()
    let token = source.observe { _ in log.append("source sees mapped \(Array(mapped.elements))") }
    source.append(2)
    // Registered after `map`, so the derived array is final when this observer runs.
    #expect(log.events == ["source sees mapped [10, 20]"])
    token.cancel()
  }

  @Test func aDerivedArrayEndsItsRegistrationWhenReleased() {
    let source = ObservableArray([1])
    do {
      let mapped = source.map { $0 + 1 }
      #expect(source.observerCount == 1)
      _ = mapped
    }
    #expect(source.observerCount == 0)
  }

  @MainActor
  @Test func aBoundTargetReloadsFirstThenGetsValidBatches() {
    let todos = ObservableArray(Array("ABCDE"))
    let table = BatchUpdateValidator<Character>()
    todos.bind(to: table, reloadThreshold: 4)
    todos.replace(with: Array("EXBDA"), id: { $0 }, isUpdated: { _, _ in false })
    todos[1] = "Y"
    todos.reset(to: Array("QR"))
    todos.append(contentsOf: Array("12345"))
    #expect(
      table.log == [
        "reloadAll(5)", "batch(-[2])", "batch(+[1] ↷[3→0, 0→4])", "batch(~[1])", "reloadAll(2)",
        "reloadAll(7)",
      ])
    #expect(table.problems.isEmpty)
    #expect(table.rows == Array(todos.elements))
  }

  @MainActor
  @Test func aDerivedArrayBoundInlineKeepsUpdatingItsTargetUntilTheTargetGoes() {
    let source = ObservableArray([1, 2, 3])
    weak var weakTable: BatchUpdateValidator<Int>?
    do {
      let table = BatchUpdateValidator<Int>()
      weakTable = table
      source.filter { $0 % 2 == 1 }.bind(to: table)
      source.append(5)
      source.remove(at: 0)
      #expect(table.log == ["reloadAll(2)", "batch(+[2])", "batch(-[0])"])
      #expect(table.rows == [3, 5])
      #expect(source.observerCount == 1)
    }
    #expect(weakTable == nil)
    // The next change prunes the dead binding, which releases the filtered array and with it
    // its registration on the source.
    source.append(7)
    #expect(source.observerCount == 0)
  }

  @Test func writersOnSeveralThreadsDeliverEveryChangeSetInOrderToANonisolatedObserver() async {
    await onItsOwnThread {
      let numbers = ObservableArray([Int]())
      let log = ChangeLog(numbers)
      let mapped = numbers.map { $0 * 2 }
      let mappedLog = ChangeLog(mapped)
      runConcurrently(4) { writer in
        for step in 0..<300 {
          switch step % 5 {
          case 0: numbers.edit { if $0.count > 1 { $0.move(from: 0, to: $0.count - 1) } }
          case 1:
            numbers.replace(
              with: Array(numbers.elements.reversed().prefix(20)), id: { $0 },
              isUpdated: { _, _ in false })
          case 2: numbers.edit { if !$0.elements.isEmpty { $0.remove(at: 0) } }
          default: numbers.append(writer * 1_000 + step)
          }
        }
      }
      // Every writer has returned, and the writer sending the change sets returns only once none
      // is left (the others queue theirs behind it and return): nothing is left to deliver.
      #expect(log.replica == Array(numbers.elements))
      #expect(mappedLog.replica == numbers.elements.map { $0 * 2 })
      #expect(log.changeSets.count == 1_201)
    }
  }

  @MainActor
  @Test func aBoundTargetGetsValidBatchesForChangesMadeOnBackgroundThreads() async {
    let numbers = ObservableArray([Int]())
    let table = BatchUpdateValidator<Int>()
    numbers.bind(to: table)
    let writers = (0..<2).map { writer in
      runInBackground {
        for step in 0..<150 {
          if step % 5 == 4 {
            numbers.edit { if $0.count > 2 { $0.move(from: 0, to: 2) } }
          } else {
            numbers.append(writer * 1_000 + step)
          }
        }
      }
    }
    for writer in writers { #expect(writer.waitUntilFinished("a background writer")) }
    let deadline = ContinuousClock.now + .seconds(testTimeout)
    // The writers are done, so the elements are final; the main actor catches up in order (the
    // last two changes are moves of three elements, which cannot come back to the same order).
    let final = Array(numbers.elements)
    #expect(final.count == 240)
    while table.rows != final && ContinuousClock.now < deadline {
      await Task.yield()
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(table.problems == [])
    #expect(table.rows == final)
    #expect(table.log.first == "reloadAll(0)")
  }

  @MainActor
  @Test func aMainActorObserverGetsEveryBackgroundChangeSetInOrderWithItsOwnSnapshot() async {
    let numbers = ObservableArray([Int]())
    var received: [ArrayChangeSet<Int>] = []
    let token = numbers.observe(options: [.new]) { changes in
      MainActor.assertIsolated()
      received.append(changes)
    }
    let writers = (0..<3).map { writer in
      runInBackground {
        for step in 0..<200 {
          if step % 7 == 3 {
            numbers.edit { $0.move(from: 0, to: $0.count - 1) }
          } else {
            numbers.append(writer * 1_000 + step)
          }
        }
      }
    }
    for writer in writers { #expect(writer.waitUntilFinished("a background writer")) }
    let deadline = ContinuousClock.now + .seconds(testTimeout)
    while received.count < 600 && ContinuousClock.now < deadline {
      await Task.yield()
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    #expect(received.count == 600)
    var replica: [Int] = []
    for changes in received {
      replica = changes.applying(to: replica)
      #expect(replica == Array(changes.elements))
    }
    #expect(replica == Array(numbers.elements))
    token.cancel()
  }
}
