import PropertyObservation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Bad offsets trap with `Array`'s message, before anything changes: the observer registered in
/// the child process would print "delivered" to standard error if a change set went out first.
/// Serialized: several of these children trapping at once ended `swift test`'s whole run early
/// on this toolchain (the run stopped reporting, exit status 1).
@Suite("ObservableArray preconditions", .serialized)
struct ObservableArrayPreconditionTests {
  /// Checks the output of a child process that trapped.
  private func expect(
    _ result: ExitTest.Result?, toSay message: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    // An optimised build traps without printing the message.
    #if DEBUG
      #expect(output.contains(message), sourceLocation: sourceLocation)
    #endif
    #expect(!output.contains("delivered"), sourceLocation: sourceLocation)
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

/// Writes a line to standard error (the tests import no Foundation here).
private enum StandardError {
  static func print(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  }
}
