import PropertyObservation
import TestSupport
import Testing

@Suite("filter and compactMap")
struct FilteringTests {
  // MARK: - filter

  @Test func filterStartsWithTheCurrentValueWhenItIsAccepted() {
    let source = Observable(4)
    let even = source.filter(initial: 0) { $0 % 2 == 0 }
    #expect(even.value == 4)
  }

  @Test func filterStartsWithTheInitialValueWhenTheCurrentOneIsRejected() {
    let source = Observable(3)
    let even = source.filter(initial: 0) { $0 % 2 == 0 }
    let log = RecordingLog<String>()
    let token = even.observe(options: [.initial, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    #expect(log.events == ["[.initial] 0"])
    token.cancel()
  }

  @Test func filterPublishesAcceptedChangesOnlyAndKeepsTheLastAcceptedValue() {
    let source = Observable(0)
    let even = source.filter(initial: -1) { $0 % 2 == 0 }
    let log = RecordingLog<String>()
    let token = even.observe(options: [.old, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    for value in [1, 2, 3, 5, 2, 4] { source.value = value }
    #expect(log.events == ["[.old] 0", "[.new] 2", "[.old] 2", "[.new] 2", "[.old] 2", "[.new] 4"])
    source.value = 7
    #expect(even.value == 4)
    token.cancel()
  }

  @Test func filterRunsItsPredicateOncePerChange() {
    let source = Observable(1)
    let calls = RecordingLog<Int>()
    let odd = source.filter(initial: 0) { value in
      calls.append(value)
      return value % 2 == 1
    }
    let tokens = (0..<3).map { _ in odd.observe { _, _ in } }
    source.value = 2
    source.value = 3
    #expect(calls.events == [1, 2, 3])
    withExtendedLifetime(tokens) {}
  }

  // MARK: - compactMap

  @Test func compactMapStartsWithTheTransformedValueOrTheInitialOne() {
    let number = Observable("12")
    let text = Observable("twelve")
    #expect(number.compactMap(initial: 0) { Int($0) }.value == 12)
    #expect(text.compactMap(initial: 0) { Int($0) }.value == 0)
  }

  @Test func compactMapPublishesNonNilResultsInOrder() {
    let text = Observable("")
    let number = text.compactMap(initial: 0) { Int($0) }
    let log = RecordingLog<Int>()
    let token = number.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    for typed in ["1", "12", "12a", "12", "", "7"] { text.value = typed }
    #expect(log.events == [0, 1, 12, 12, 7])
    #expect(number.value == 7)
    token.cancel()
  }

  @Test func anObserverThatSetsTheSourceFromTheDerivedRoundSeesEveryAcceptedValueInOrder() {
    let source = Observable(0)
    let even = source.filter(initial: 0) { $0 % 2 == 0 }
    // Steps the source by two from inside the derived rounds, up to 6; the second observer
    // must still see every value, in order, each once.
    let stepper = even.observe { value, _ in
      if value < 6 { source.value = value + 2 }
    }
    let log = RecordingLog<Int>()
    let recorder = even.observe { value, _ in log.append(value) }
    source.value = 1
    source.value = 2
    #expect(log.events == [2, 4, 6])
    #expect(even.value == 6)
    withExtendedLifetime((stepper, recorder)) {}
  }

  // MARK: - Lifetimes

  @Test func filteredObservablesKeepTheirSourceAndGoWithTheirLastUser() {
    let source = Observable("1")
    weak var weakFiltered: ReadOnlyObservable<String>?
    weak var weakMapped: ReadOnlyObservable<Int>?
    do {
      let filtered = source.filter(initial: "") { !$0.isEmpty }
      let mapped = filtered.compactMap(initial: 0) { Int($0) }
      weakFiltered = filtered
      weakMapped = mapped
      #expect(source.observerCount == 1)
    }
    #expect(weakMapped == nil)
    #expect(weakFiltered == nil)
    #expect(source.observerCount == 0)
  }

  @Test func anInlineChainLivesAsLongAsItsToken() {
    let source = Observable(0)
    let log = RecordingLog<Int>()
    do {
      let token = source.compactMap(initial: 0) { $0 > 0 ? $0 : nil }.observe { value, _ in
        log.append(value)
      }
      source.value = -1
      source.value = 2
      withExtendedLifetime(token) {}
    }
    source.value = 3
    #expect(log.events == [2])
    #expect(source.observerCount == 0)
  }

  // MARK: - Threads

  @Test func acceptedValuesStayInOrderWhenTheSourceIsSetFromManyThreads() async {
    await onItsOwnThread {
      let source = Observable(0)
      let even = source.filter(initial: 0) { $0 % 2 == 0 }
      let log = RecordingLog<Int>()
      let token = even.observe { value, _ in log.append(value) }
      runConcurrently(4) { _ in
        for _ in 0..<250 { source.update { $0 += 1 } }
      }
      #expect(log.events == Array(stride(from: 2, through: 1000, by: 2)))
      #expect(even.value == 1000)
      token.cancel()
    }
  }
}
