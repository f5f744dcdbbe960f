import PropertyObservation
import TestSupport
import Testing

private struct Boom: Error {}

/// Issue 14: derived values never show a state that never existed, and transactions deliver once.
@Suite("Glitch-free derived values and transactions")
struct ConsistencyTests {
  // MARK: - Glitch-free propagation

  @MainActor @Test func aDiamondPublishesOnlyPairsThatExisted() {
    let a = Observable(1)
    let pairs = a.combineLatest(a.map { $0 * 10 })
    var log: [String] = []
    let token = pairs.observe(options: [.initial, .new]) { pair, _ in log.append("\(pair)") }
    a.value = 2
    a.value = 3
    #expect(log == ["(1, 10)", "(2, 20)", "(3, 30)"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aDeepDiamondRecomputesEachNodeOncePerChange() {
    // a ─ b = a+1 ─ c = b*2 ─┐
    //  └──────────────────── d = (a, c, b)
    let a = Observable(0)
    let b = a.map { $0 + 1 }
    let c = b.map { $0 * 2 }
    let d = a.combineLatest(c, b)
    var calls = 0
    var log: [String] = []
    let token = d.observe { triple, _ in
      calls += 1
      log.append("\(triple.0) \(triple.1) \(triple.2)")
    }
    for value in 1...3 { a.value = value }
    #expect(log == ["1 4 2", "2 6 3", "3 8 4"])
    #expect(calls == 3)
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aSingleSourceDerivedValueIsUpdatedAtItsRegistrationsPlaceInTheRound() {
    // `map` has one source: it is computed when the source's round reaches its registration
    // (made when `map` was called), so observers registered after it see the new value.
    let a = Observable(1)
    let doubled = a.map { $0 * 2 }
    var log: [String] = []
    let first = a.observe { value, _ in log.append("a \(value), doubled \(doubled.value)") }
    let second = doubled.observe { value, _ in log.append("doubled \(value)") }
    a.value = 2
    #expect(log == ["doubled 4", "a 2, doubled 4"])
    #expect(doubled.value == 4)
    withExtendedLifetime((first, second)) {}
  }

  @MainActor @Test func aCombinedValueIsRecomputedAfterTheRoundThatChangedItsSource() {
    // `combineLatest` waits until the propagation ends, so that every source the change
    // affects has its new value: an observer of the source sees the combination not yet updated.
    let a = Observable(1)
    let other = Observable("x")
    let combined = a.combineLatest(other)
    var log: [String] = []
    let first = a.observe { value, _ in log.append("a \(value), combined \(combined.value.0)") }
    let second = combined.observe { pair, _ in log.append("combined \(pair.0)\(pair.1)") }
    a.value = 2
    #expect(log == ["a 2, combined 1", "combined 2x"])
    withExtendedLifetime((first, second)) {}
  }

  @MainActor @Test func removeDuplicatesComparesWithTheLastPublishedValue() {
    let a = Observable(1)
    let parity = a.map { $0 % 2 }.removeDuplicates()
    var log: [Int] = []
    let token = parity.observe { value, _ in log.append(value) }
    for value in [3, 4, 6, 7] { a.value = value }
    #expect(log == [0, 1])
    withExtendedLifetime(token) {}
  }

  // MARK: - Transactions

  @MainActor @Test func aTransactionDeliversOneRoundPerObservableAndOneDerivedValue() {
    let first = Observable("Ray")
    let last = Observable("Wenderlich")
    let fullName = first.combineLatest(last).map { "\($0) \($1)" }
    var names: [String] = []
    var changes: [String] = []
    let nameToken = fullName.observe { name, _ in names.append(name) }
    let firstToken = first.observe(options: [.old, .new]) { value, option in
      changes.append("\(option == .old ? "old" : "new") \(value)")
    }
    withObservationTransaction {
      first.value = "Jane"
      last.value = "Doe"
      first.value = "Janet"
      // Reads see the sets at once.
      #expect(first.value == "Janet")
      #expect(names.isEmpty)
    }
    #expect(names == ["Janet Doe"])
    #expect(changes == ["old Ray", "new Janet"])
    withExtendedLifetime((nameToken, firstToken)) {}
  }

  @MainActor @Test func roundsRunInTheOrderTheObservablesWereFirstChanged() {
    let a = Observable(0)
    let b = Observable(0)
    var log: [String] = []
    let tokens = [
      a.observe { value, _ in log.append("a \(value)") },
      b.observe { value, _ in log.append("b \(value)") },
    ]
    withObservationTransaction {
      b.value = 1
      a.value = 1
      b.value = 2
    }
    #expect(log == ["b 2", "a 1"])
    withExtendedLifetime(tokens) {}
  }

  @MainActor @Test func nestedTransactionsDeliverOnceAtTheOutermostEnd() {
    let a = Observable(0)
    var log: [Int] = []
    let token = a.observe { value, _ in log.append(value) }
    let result = withObservationTransaction {
      a.value = 1
      withObservationTransaction { a.value = 2 }
      #expect(log.isEmpty, "the inner transaction's end delivers nothing")
      a.value = 3
      return "done"
    }
    #expect(result == "done")
    #expect(log == [3])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aThrowingBodyStillDeliversWhatItSetAndRethrows() {
    let a = Observable(0)
    var log: [Int] = []
    let token = a.observe { value, _ in log.append(value) }
    #expect(throws: Boom.self) {
      try withObservationTransaction {
        a.value = 1
        throw Boom()
      }
    }
    #expect(log == [1])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aRegistrationInsideATransactionGetsItsInitialValueAndTheTransactionsRound()
  {
    let a = Observable(0)
    var log: [String] = []
    var token: ObservationToken?
    withObservationTransaction {
      a.value = 1
      token = a.observe(options: [.initial, .old, .new]) { value, option in
        log.append("\(option == .initial ? "initial" : option == .old ? "old" : "new") \(value)")
      }
      a.value = 2
    }
    #expect(log == ["initial 1", "old 0", "new 2"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aSetInsideACallbackOfTheTransactionsRoundIsAnOrdinaryQueuedSet() {
    let a = Observable(0)
    let b = Observable(0)
    var log: [String] = []
    let tokens = [
      a.observe { value, _ in
        log.append("a \(value)")
        if value == 1 { a.value = 10 }
      },
      b.observe { value, _ in log.append("b \(value)") },
    ]
    withObservationTransaction {
      a.value = 1
      b.value = 1
    }
    #expect(log == ["a 1", "a 10", "b 1"])
    withExtendedLifetime(tokens) {}
  }

  // Nonisolated, so that the callbacks run on the setting thread. A main-actor test's callbacks
  // go through the main queue's one mailbox, which runs a nested round inside the outer call
  // only while nothing else waits there; other tests' main-actor calls may be waiting.
  @Test func aSetInsideATransactionInsideACallbackWaitsForTheTransactionsEnd() {
    let trigger = Observable(0)
    let a = Observable(0)
    let log = RecordingLog<String>()
    let tokens = [
      trigger.observe { _, _ in
        withObservationTransaction {
          a.value = 1
          a.value = 2
          log.append("body done")
        }
        log.append("after")
      },
      a.observe { value, _ in log.append("a \(value)") },
    ]
    trigger.value = 1
    #expect(log.events == ["body done", "a 2", "after"])
    withExtendedLifetime(tokens) {}
  }

  @Test func valuesYieldsOneElementPerTransaction() async {
    let a = Observable(0)
    var iterator = a.values.makeAsyncIterator()
    #expect(await iterator.next() == 0)
    withObservationTransaction {
      a.value = 1
      a.value = 2
      a.value = 3
    }
    a.value = 4
    #expect(await iterator.next() == 3)
    #expect(await iterator.next() == 4)
  }

  @Test func aDriverGetsOneValuePerTransaction() {
    let main = ManualScheduler()
    let first = Observable("Ray")
    let last = Observable("Wenderlich")
    let driver = first.combineLatest(last).map { "\($0) \($1)" }
      .asDriver(scheduler: .manual(main))
    let log = RecordingLog<String>()
    let token = main.runOnMain { driver.drive { log.append($0) } }
    withObservationTransaction {
      first.value = "Jane"
      last.value = "Doe"
    }
    main.runAll()
    #expect(log.events == ["Ray Wenderlich", "Jane Doe"])
    withExtendedLifetime(token) {}
  }
}
