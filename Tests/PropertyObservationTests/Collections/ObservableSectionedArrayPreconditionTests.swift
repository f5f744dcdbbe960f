import PropertyObservation
import Testing

/// Bad positions trap with a message naming them, before anything changes: the observer
/// registered in the child process would print "delivered" to standard error if a change set
/// went out first. Serialized, as the array's precondition tests are.
@Suite("ObservableSectionedArray preconditions", .serialized)
struct ObservableSectionedArrayPreconditionTests {
  private func expect(
    _ result: ExitTest.Result?, toSay message: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    expectStandardError(
      of: result, toSay: message, notToSay: "delivered", sourceLocation: sourceLocation)
  }

  @Test func insertingASectionPastTheEndTrapsWithSectionIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = ObservableSectionedArray(sections(["A": [1]]))
      let token = list.observe { _ in StandardError.print("delivered") }
      list.insertSection(ArraySection(model: Group(id: "B")), at: 2)
      token.cancel()
    }
    expect(result, toSay: "Section index is out of range")
  }

  @Test func insertingAnItemPastTheEndTrapsWithItemIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = ObservableSectionedArray(sections(["A": [1]]))
      let token = list.observe { _ in StandardError.print("delivered") }
      list.insert(Row(id: 2), at: ItemPath(section: 0, item: 2))
      token.cancel()
    }
    expect(result, toSay: "Item index is out of range")
  }

  @Test func movingAnItemPastTheEndOfItsOwnSectionTrapsWithItemIndexOutOfRange() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = ObservableSectionedArray(sections(["A": [1, 2]]))
      let token = list.observe { _ in StandardError.print("delivered") }
      list.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2))
      token.cancel()
    }
    expect(result, toSay: "Item index is out of range")
  }

  @Test func observingOldValuesTraps() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = ObservableSectionedArray(sections(["A": [1]]))
      _ = list.observe(options: [.old]) { _ in StandardError.print("delivered") }
    }
    expect(
      result, toSay: "a sectioned array's change sets are observed with .initial and .new only")
  }
}
