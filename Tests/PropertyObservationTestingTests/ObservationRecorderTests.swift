import Dispatch
import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

@Suite("ObservationRecorder")
struct ObservationRecorderTests {
  typealias Event = ObservationRecorder.Event

  // MARK: - Recording and ordering

  @Test func recordsSeveralObservablesInOneGlobalOrder() {
    let name = Observable("Madeline")
    let age = Observable(30)
    let recorder = ObservationRecorder()
    recorder.record(name, as: "name", options: [.initial, .old, .new])
    recorder.record(age, as: "age")

    name.value = "Amelia"
    age.value = 31
    name.value = "Ada"

    #expect(
      recorder.events == [
        .initial("name", "Madeline"),
        .initial("age", 30),
        .old("name", "Madeline"),
        .new("name", "Amelia"),
        .new("age", 31),
        .old("name", "Amelia"),
        .new("name", "Ada"),
      ])
  }

  @Test func recordsNestedSetsAfterTheRoundThatCausedThem() {
    // A callback on `celsius` sets `fahrenheit`; the nested round on the other observable runs
    // inside the outer callback, while a nested set on the same observable is queued.
    let celsius = Observable(0)
    let fahrenheit = Observable(32)
    let recorder = ObservationRecorder()
    recorder.record(celsius, as: "first", options: [.new])
    let token = celsius.observe { value, _ in
      fahrenheit.value = value * 9 / 5 + 32
      if value == 100 { celsius.value = 0 }
    }
    recorder.record(celsius, as: "last", options: [.new])
    recorder.record(fahrenheit, as: "fahrenheit", options: [.new])

    celsius.value = 100

    #expect(
      recorder.events == [
        .new("first", 100),
        .new("fahrenheit", 212),
        .new("last", 100),
        .new("first", 0),
        .new("fahrenheit", 32),
        .new("last", 0),
      ])
    token.cancel()
  }

  @MainActor @Test func sinkRecordsAnyCallbackIntoTheSameLog() {
    let title = Observable("Inbox")
    let label = CallbackSource<String>()
    let recorder = ObservationRecorder()
    recorder.record(title, as: "model")
    label.onValue = recorder.sink("label")
    let token = title.observe { value, _ in label.emit(value.uppercased()) }

    title.value = "Sent"
    recorder.append(.new("step", "done"))

    #expect(
      recorder.events == [
        .initial("model", "Inbox"),
        .new("model", "Sent"),
        .new("label", "SENT"),
        .new("step", "done"),
      ])
    token.cancel()
  }

  @MainActor
  @Test func sinkFeedsAMainActorCallbackAPI() {
    // The shape of a Driver's callback: a `@MainActor` closure.
    let recorder = ObservationRecorder()
    let onMain: @MainActor (Int) -> Void = recorder.sink("driver")
    onMain(1)
    onMain(2)
    #expect(recorder.events == [.new("driver", 1), .new("driver", 2)])
  }

  @Test func transformRecordsValuesThatAreNotEquatable() {
    let account = Observable(Account(owner: "Madeline"))
    let recorder = ObservationRecorder()
    recorder.record(account, as: "owner") { $0.owner }

    account.value = Account(owner: "Amelia")

    #expect(recorder.events == [.initial("owner", "Madeline"), .new("owner", "Amelia")])
  }

  @Test func eventsCompareTheValueType() {
    #expect(Event.new("ratio", 2) != Event.new("ratio", 2.0))
    #expect(Event.new("ratio", 2) != Event.new("ratio", Int8(2)))
    #expect(Event.new("ratio", 2) == Event.new("ratio", 2))
    #expect(Event.new("ratio", 2) != Event.old("ratio", 2))
    #expect(Event.new("ratio", 2) != Event.new("scale", 2))
    #expect(Event.new("name", "Ada") == Event.new("name", Optional("Ada")))
  }

  @Test func eventsDescribeThemselvesAsTheyAreWritten() {
    #expect(Event.initial("name", "Madeline").description == #".initial("name", "Madeline")"#)
    #expect(Event.old("count", 1).description == #".old("count", 1)"#)
    #expect(Event.new("ratio", 0.5).description == #".new("ratio", 0.5)"#)
    #expect(Event("both", [.old, .new], 1).description == #"Event("both", [.old, .new], 1)"#)
  }

  @Test func removeAllEventsKeepsRecording() {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter")
    recorder.removeAllEvents()
    counter.value = 1
    #expect(recorder.events == [.new("counter", 1)])
  }

  // MARK: - Threads

  @Test func recordsEveryThreadsDeliveriesInEachObservablesOrder() {
    let threads = 4
    let setsPerThread = 250
    let observables = (0..<threads).map { _ in Observable(0) }
    let recorder = ObservationRecorder()
    for (index, observable) in observables.enumerated() {
      recorder.record(observable, as: "o\(index)", options: [.new])
    }

    DispatchQueue.concurrentPerform(iterations: threads) { index in
      for value in 1...setsPerThread { observables[index].value = value }
    }

    let events = recorder.events
    #expect(events.count == threads * setsPerThread)
    for index in 0..<threads {
      let label = "o\(index)"
      let own = events.filter { $0.label == label }
      #expect(own == (1...setsPerThread).map { Event.new(label, $0) })
    }
  }

  @Test func recordsConcurrentSetsOfOneObservableInTheOrderTheyWereMade() {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter", options: [.old, .new])

    DispatchQueue.concurrentPerform(iterations: 4) { _ in
      for _ in 0..<250 { counter.update { $0 += 1 } }
    }

    // `update` is atomic and rounds never interleave, so the log is every round, in order.
    let expected = (1...1_000).flatMap { [Event.old("counter", $0 - 1), .new("counter", $0)] }
    #expect(recorder.difference(from: expected) == nil)
  }

  // MARK: - Waiting

  @Test func waitForEventsReturnsOnceDeliveriesOnAnotherThreadArrive() {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter")

    DispatchQueue.global().async {
      counter.value = 1
      counter.value = 2
    }

    #expect(recorder.waitForEvents(count: 3))
    #expect(
      recorder.events == [.initial("counter", 0), .new("counter", 1), .new("counter", 2)])
  }

  @Test func waitForEventsReturnsAtOnceWhenEnoughEventsAreThere() {
    let recorder = ObservationRecorder()
    recorder.record(Observable(1), as: "one")
    #expect(recorder.waitForEvents(count: 1, timeout: .never))
  }

  @Test func waitForEventsTimesOutWhenTooFewEventsArrive() {
    let recorder = ObservationRecorder()
    recorder.record(Observable(1), as: "one")
    #expect(!recorder.waitForEvents(count: 2, timeout: .milliseconds(20)))
  }

  @Test func asyncWaitForEventsResumesOnceDeliveriesArrive() async {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter", options: [.new])

    DispatchQueue.global().async {
      for value in 1...3 { counter.value = value }
    }

    #expect(await recorder.waitForEvents(count: 3))
    #expect(recorder.events == [.new("counter", 1), .new("counter", 2), .new("counter", 3)])
  }

  @Test func asyncWaitForEventsTimesOut() async {
    let recorder = ObservationRecorder()
    #expect(await !recorder.waitForEvents(count: 1, timeout: .milliseconds(20)))
  }

  @Test func asyncWaitForEventsStopsWhenTheTaskIsCancelled() async {
    let recorder = ObservationRecorder()
    let waiting = Task { await recorder.waitForEvents(count: 1, timeout: .seconds(600)) }
    waiting.cancel()
    #expect(await waiting.value == false)
  }

  @Test func waitForEventsWhereResumesOnceTheConditionHoldsPastEventsItIgnores() async {
    let isLoading = Observable(false)
    let recorder = ObservationRecorder()
    recorder.record(isLoading, as: "loading")
    DispatchQueue.global().async {
      for value in [true, false, true, false] { isLoading.value = value }
    }
    // The second load is the one awaited: a count would have to know how many events precede it.
    #expect(
      await recorder.waitForEvents { events in
        events.filter { $0 == .new("loading", false) }.count == 2
      })
    #expect(
      recorder.events == [
        .initial("loading", false), .new("loading", true), .new("loading", false),
        .new("loading", true), .new("loading", false),
      ])
  }

  @Test func waitForEventsWhereReturnsAtOnceWhenTheConditionAlreadyHolds() async {
    let recorder = ObservationRecorder()
    recorder.append(.new("step", 1))
    #expect(await recorder.waitForEvents(timeout: .never) { $0 == [.new("step", 1)] })
  }

  @Test func waitForEventsWhereTimesOutWhenTheConditionNeverHolds() async {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter")
    counter.value = 1
    #expect(
      await !recorder.waitForEvents(timeout: .milliseconds(20)) {
        $0.contains(.new("counter", 2))
      })
    #expect(recorder.events == [.initial("counter", 0), .new("counter", 1)])
  }

  @Test func waitForEventsWhereEndsOnceWhenThreadsRecordAtTheSameMoment() async {
    let recorder = ObservationRecorder()
    let threads = 4
    let perThread = 50
    for thread in 0..<threads {
      DispatchQueue.global().async {
        for step in 0..<perThread { recorder.append(.new("thread \(thread)", step)) }
      }
    }
    #expect(await recorder.waitForEvents { $0.count >= threads * perThread })
    #expect(recorder.events.count == threads * perThread)
  }

  @Test func onEventCountRunsOnceWhenTheCountIsReached() {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    let reached = ObservationRecorder()
    recorder.record(counter, as: "counter", options: [.new])
    recorder.onEventCount(2) {
      reached.append(.new("reached", recorder.events.count))
    }

    counter.value = 1
    #expect(reached.events == [])
    counter.value = 2
    counter.value = 3
    #expect(reached.events == [.new("reached", 2)])

    recorder.onEventCount(1) { reached.append(.new("already", true)) }
    #expect(reached.events == [.new("reached", 2), .new("already", true)])
  }

  // MARK: - Failure description

  @Test func differenceIsNilWhenTheLogsMatch() {
    let recorder = ObservationRecorder()
    recorder.record(Observable("Madeline"), as: "name")
    #expect(recorder.difference(from: [.initial("name", "Madeline")]) == nil)
  }

  @Test func differenceShowsMissingAndUnexpectedEventsInPlace() {
    let name = Observable("Madeline")
    let recorder = ObservationRecorder()
    recorder.record(name, as: "name")
    name.value = "Ada"
    name.value = "Grace"

    let difference = recorder.difference(from: [
      .initial("name", "Madeline"),
      .new("name", "Amelia"),
      .new("name", "Grace"),
      .new("name", "Hedy"),
    ])

    #expect(
      difference == """
        Recorded events differ from the expected ones (- expected, + recorded): \
        expected 4, recorded 3
          .initial("name", "Madeline")
        - .new("name", "Amelia")
        + .new("name", "Ada")
          .new("name", "Grace")
        - .new("name", "Hedy")
        """)
  }

  @Test func differenceNamesTheTypesWhenOnlyTheyDiffer() {
    let ratio = Observable(Int8(2))
    let recorder = ObservationRecorder()
    recorder.record(ratio, as: "ratio", options: [.initial])

    #expect(
      recorder.difference(from: [.initial("ratio", 2)]) == """
        Recorded events differ from the expected ones (- expected, + recorded): \
        expected 1, recorded 1
        - .initial("ratio", 2)  // value of type Int
        + .initial("ratio", 2)  // value of type Int8
        """)
  }

  @Test func differenceListsAnEmptyLogAsAllMissing() {
    let recorder = ObservationRecorder()
    #expect(
      recorder.difference(from: [.new("a", 1)]) == """
        Recorded events differ from the expected ones (- expected, + recorded): \
        expected 1, recorded 0
        - .new("a", 1)
        """)
  }

  @Test func descriptionListsTheEvents() {
    let recorder = ObservationRecorder()
    recorder.record(Observable(1), as: "one")
    #expect(recorder.description == "ObservationRecorder(1 event)\n  .initial(\"one\", 1)")
    #expect(ObservationRecorder().description == "ObservationRecorder(0 events)")
  }

  // MARK: - Lifetimes

  @MainActor @Test func theRecorderIsNotKeptAliveByWhatItRecords() {
    let counter = Observable(0)
    let source = CallbackSource<Int>()
    weak var weakRecorder: ObservationRecorder?
    do {
      let recorder = ObservationRecorder()
      weakRecorder = recorder
      recorder.record(counter, as: "counter")
      source.onValue = recorder.sink("source")
    }
    #expect(weakRecorder == nil)
    #expect(counter.observerCount == 0)
    counter.value = 1  // no registration is left to call
    source.emit(1)  // the sink does nothing once its recorder is gone
  }

  @Test func releasingTheRecorderReleasesTheObservables() {
    weak var weakCounter: Observable<Int>?
    do {
      let recorder = ObservationRecorder()
      do {
        let counter = Observable(0)
        weakCounter = counter
        recorder.record(counter, as: "counter")
      }
      #expect(weakCounter != nil)
    }
    #expect(weakCounter == nil)
  }

  @Test func stopRecordingEndsRegistrationsAndKeepsTheLog() {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter")
    recorder.stopRecording()
    counter.value = 1
    #expect(counter.observerCount == 0)
    #expect(recorder.events == [.initial("counter", 0)])
  }

  @Test func anInlineChainIsRecordedForAsLongAsTheRecorderLives() {
    let source = Observable(1)
    weak var weakDerived: ReadOnlyObservable<Int>?
    let recorder = ObservationRecorder()
    recorder.record(
      makeDerivedChain(from: source, transform: { $0 * 10 }, created: { weakDerived = $0 }),
      as: "derived")

    source.value = 2
    #expect(recorder.events == [.initial("derived", 10), .new("derived", 20)])

    recorder.stopRecording()
    #expect(weakDerived == nil)
  }
}
