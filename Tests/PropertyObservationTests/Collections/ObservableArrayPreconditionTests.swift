import PropertyObservation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Bad offsets trap with `Array`'s message, before anything changes: the observer registered in
/// the child process would print "delivered" to standard error if a change set went out first.
/// The message is printed in optimised builds too (CI runs these under `swift test -c release`).
/// Serialized: several of these children trapping at once ended `swift test`'s whole run early
/// on this toolchain (the run stopped reporting, exit status 1).
@Suite("ObservableArray preconditions", .serialized)
struct ObservableArrayPreconditionTests {
  /// Checks the output of a child process that trapped: the message, and no change set.
  private func expect(
    _ result: ExitTest.Result?, toSay message: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    expectStandardError(
      of: result, toSay: message, notToSay: "delivered", sourceLocation: sourceLocation)
  }

  @Test func settingPastTheEndTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array[2] = 3
      token.cancel()
    }
    expect(result, toSay: "Index out of range")
  }

  @Test func insertingPastTheEndTrapsWithArraysMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array.insert(3, at: 3)
      token.cancel()
    }
    expect(result, toSay: "Array index is out of range")
  }

  @Test func removingAtTheEndTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array.remove(at: 2)
      token.cancel()
    }
    expect(result, toSay: "Index out of range")
  }

  @Test func removingASubrangePastTheEndTrapsWithArraysMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array.removeSubrange(1..<3)
      token.cancel()
    }
    expect(result, toSay: "Array replace: subrange extends past the end")
  }

  @Test func movingToABadOffsetTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array.move(from: 0, to: 2)
      token.cancel()
    }
    expect(result, toSay: "Index out of range")
  }

  @Test func aBadOffsetInAnEditTrapsBeforeTheEditIsDelivered() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      let token = array.observe { _ in StandardError.print("delivered") }
      array.edit { editor in
        editor.append(3)
        editor.move(from: 3, to: 0)
      }
      token.cancel()
    }
    expect(result, toSay: "Index out of range")
  }
}

/// The checks of the rest of the collections API: reading, refreshing, observing and applying.
@Suite("ObservableArray preconditions, beyond the mutations", .serialized)
struct ArrayPreconditionMessageTests {
  @Test func readingPastTheEndTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let array = ObservableArray([1, 2])
      _ = array[2]
    }
    expectStandardError(of: result, toSay: "Index out of range")
  }

  @Test func readingASnapshotPastTheEndTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let snapshot = ObservableArray([1, 2]).elements
      _ = snapshot[-1]
    }
    expectStandardError(of: result, toSay: "Index out of range")
  }

  @Test func refreshingPastTheEndTrapsWithIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      ObservableArray([1, 2]).refresh(at: 2)
    }
    expectStandardError(of: result, toSay: "Index out of range")
  }

  @Test func insertingAtANegativeOffsetTrapsWithArraysMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      ObservableArray([1, 2]).insert(contentsOf: [3], at: -1)
    }
    expectStandardError(of: result, toSay: "Array replace: subrange start is negative")
  }

  @Test func observingOldValuesTrapsWithTheOptionsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let token = ObservableArray([1]).observe(options: [.old, .new]) { _ in }
      token.cancel()
    }
    expectStandardError(
      of: result, toSay: "an array's change sets are observed with .initial and .new only")
  }

  @Test func applyingAChangeSetToTheWrongCountTraps() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let changes = ArrayChangeSet.inserting(ArraySnapshot([1, 2]))
      _ = changes.applying(to: [0])
    }
    expectStandardError(
      of: result, toSay: "applying a change set to a collection of the wrong count")
  }

  @Test func batchUpdatesFromTheWrongCountTrap() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let changes = ArrayChangeSet.inserting(ArraySnapshot([1, 2]))
      _ = changes.batchUpdates(from: [0])
    }
    expectStandardError(
      of: result, toSay: "applying a change set to a collection of the wrong count")
  }
}

/// Writes a line to standard error (the tests import no Foundation here); the sectioned array's
/// precondition tests use it too.
enum StandardError {
  static func print(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  }
}
