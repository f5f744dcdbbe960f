import PropertyObservation
import TestSupport
import Testing

@Suite("ReadOnlyObservableArray.filter(by:_:)")
struct QueryFilterTests {
  @Test func aNewQueryDeliversTheLeavingAsRemovalsAndTheEnteringAsInsertions() {
    let words = ObservableArray(["apple", "banana", "cherry", "avocado"])
    let query = Observable("a")
    let results = words.filter(by: query) { word, prefix in word.hasPrefix(prefix) }
    let log = ChangeLog(results)
    query.value = "b"
    query.value = ""
    query.value = "c"
    #expect(
      log.descriptions == [
        "reset +[0, 1]", "-[0, 1] +[0]", "+[0, 2, 3]", "-[0, 1, 3]",
      ])
    #expect(Array(results.elements) == ["cherry"])
    #expect(log.replica == ["cherry"])
  }

  @Test func aFilterMadeAfterEditsStartsFromTheCurrentElementsAndSkipsNoLaterChange() {
    let words = ObservableArray(["apple"])
    // Observed and edited first: once delivered, the array lets the kept change set's elements
    // go, and a registration made later starts from the array itself.
    let earlier = words.observe { _ in }
    words.append("avocado")
    words[0] = "banana"
    let query = Observable("a")
    let results = words.filter(by: query) { word, prefix in word.hasPrefix(prefix) }
    let log = ChangeLog(results)
    words.append("apricot")
    #expect(log.descriptions == ["reset +[0]", "+[1]"])
    #expect(log.replica == ["avocado", "apricot"])
    withExtendedLifetime(earlier) {}
  }

  @Test func aQueryThatChangesNothingDeliversNothing() {
    let words = ObservableArray(["apple", "avocado"])
    let query = Observable("a")
    let results = words.filter(by: query) { word, prefix in word.hasPrefix(prefix) }
    let log = ChangeLog(results)
    query.value = "av"
    query.value = "a"
    #expect(log.descriptions == ["reset +[0, 1]", "-[0]", "+[0]"])
    query.value = "a"
    query.value = ""
    #expect(log.descriptions == ["reset +[0, 1]", "-[0]", "+[0]"])
  }

  @Test func changesOfTheArrayAreFilteredWithTheCurrentQuery() {
    let words = ObservableArray(["apple"])
    let query = Observable("b")
    let results = words.filter(by: query) { word, prefix in word.hasPrefix(prefix) }
    let log = ChangeLog(results)
    words.append("banana")
    words.append("apricot")  // out: nothing
    query.value = "a"
    words[0] = "blueberry"  // leaves
    words.insert("almond", at: 0)
    #expect(log.descriptions == ["reset", "+[0]", "-[0] +[0, 1]", "-[0]", "+[0]"])
    #expect(Array(results.elements) == ["almond", "apricot"])
    #expect(log.replica == ["almond", "apricot"])
  }

  @Test func aQuerySetByAnObserverOfTheResultsIsAppliedAfterTheCurrentChange() {
    let numbers = ObservableArray([1, 2, 3, 4])
    let limit = Observable(10)
    let results = numbers.filter(by: limit) { number, limit in number < limit }
    let log = ChangeLog(results)
    let token = results.observe { changes in
      if changes.elements.count > 4 { limit.value = 3 }
    }
    numbers.append(5)
    #expect(log.descriptions == ["reset +[0, 1, 2, 3]", "+[4]", "-[2, 3, 4]"])
    #expect(log.replica == [1, 2])
    token.cancel()
  }

  @Test func theFilteredArrayEndsBothRegistrationsWhenReleased() {
    let numbers = ObservableArray([1])
    let limit = Observable(10)
    do {
      let results = numbers.filter(by: limit) { number, limit in number < limit }
      #expect(numbers.observerCount == 1)
      #expect(limit.observerCount == 1)
      _ = results
    }
    #expect(numbers.observerCount == 0)
    #expect(limit.observerCount == 0)
  }

  @Test func queriesAndChangesFromSeveralThreadsEndConsistent() {
    let numbers = ObservableArray([Int]())
    let limit = Observable(0)
    let results = numbers.filter(by: limit) { number, limit in number % 10 < limit }
    let log = ChangeLog(results)
    runConcurrently(4) { writer in
      for step in 0..<200 {
        if writer == 0 {
          limit.value = step % 10
        } else {
          numbers.append(writer * 1_000 + step)
        }
      }
    }
    let expected = Array(numbers.elements).filter { $0 % 10 < limit.value }
    #expect(Array(results.elements) == expected)
    #expect(log.replica == expected)
  }
}
