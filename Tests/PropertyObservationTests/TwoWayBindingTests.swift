import PropertyObservation
import TestSupport
import Testing

/// A value that is deliberately not `Equatable`, so the loop guard cannot rely on comparing.
private struct Draft {
  var text: String
}

@Suite("Two-way bindings")
struct TwoWayBindingTests {
  @Test func theReceiverWinsAtTheMomentOfBinding() {
    let model = Observable(Draft(text: "Ray"))
    let field = Observable(Draft(text: ""))
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let log = RecordingLog<String>()
    let modelToken = model.observe { draft, _ in log.append("model \(draft.text)") }
    let fieldToken = field.observe { draft, _ in log.append("field \(draft.text)") }

    let binding = model.bindBidirectionally(to: field)
    #expect(field.value.text == "Ray")
    #expect(log.events == ["field Ray"])
    withExtendedLifetime((binding, modelToken, fieldToken)) {}
  }

  @Test func eachChangeIsForwardedOnceWithoutAnEchoForAnyValue() {
    let model = Observable(Draft(text: "a"))
    let field = Observable(Draft(text: ""))
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let log = RecordingLog<String>()
    let modelToken = model.observe { draft, _ in log.append("model \(draft.text)") }
    let fieldToken = field.observe { draft, _ in log.append("field \(draft.text)") }
    let binding = model.bindBidirectionally(to: field)

    field.value = Draft(text: "typed")
    model.value = Draft(text: "loaded")
    field.value = Draft(text: "typed")

    #expect(
      log.events == [
        "field a",
        "field typed", "model typed",
        "model loaded", "field loaded",
        "field typed", "model typed",
      ])
    withExtendedLifetime((binding, modelToken, fieldToken)) {}
  }

  @Test func forwardingRunsBeforeObserversRegisteredAfterTheBinding() {
    let model = Observable(Draft(text: "a"))
    let field = Observable(Draft(text: ""))
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let binding = model.bindBidirectionally(to: field)
    let log = RecordingLog<String>()
    let modelToken = model.observe { draft, _ in log.append("model \(draft.text)") }
    let fieldToken = field.observe { draft, _ in log.append("field \(draft.text)") }

    field.value = Draft(text: "typed")
    #expect(log.events == ["model typed", "field typed"])
    withExtendedLifetime((binding, modelToken, fieldToken)) {}
  }

  @Test func equatableValuesSkipSetsThatChangeNothing() {
    let model = Observable("same")
    let field = Observable("same")
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let log = RecordingLog<String>()
    let fieldToken = field.observe { text, _ in log.append("field \(text)") }
    let modelToken = model.observe { text, _ in log.append("model \(text)") }

    let binding = model.bindBidirectionally(to: field)
    model.value = "new"
    #expect(log.events == ["model new", "field new"])
    withExtendedLifetime((binding, modelToken, fieldToken)) {}
  }

  @Test func guardHoldsWhenAnObserverSetsASideReentrantly() {
    // The model normalises what it is given, from inside its own round: the normalised value
    // must reach the field (whose round is still running, so the set is queued), and nothing
    // may bounce back and forth.
    let model = Observable(Draft(text: ""))
    let field = Observable(Draft(text: ""))
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let log = RecordingLog<String>()
    let normaliser = model.observe { draft, _ in
      let trimmed = String(draft.text.filter { $0 != " " })
      if trimmed != draft.text { model.value = Draft(text: trimmed) }
    }
    let modelToken = model.observe { draft, _ in log.append("model '\(draft.text)'") }
    let fieldToken = field.observe { draft, _ in log.append("field '\(draft.text)'") }
    let binding = model.bindBidirectionally(to: field)

    field.value = Draft(text: " a b ")

    #expect(model.value.text == "ab")
    #expect(field.value.text == "ab")
    #expect(
      log.events == [
        "field ''", "field ' a b '", "model ' a b '", "model 'ab'", "field 'ab'",
      ])
    withExtendedLifetime((normaliser, binding, modelToken, fieldToken)) {}
  }

  @Test func releasingTheTokenEndsTheBinding() {
    let model = Observable(Draft(text: "a"))
    let field = Observable(Draft(text: ""))
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let observersBefore = (model.observerCount, field.observerCount)
    do {
      let binding = model.bindBidirectionally(to: field)
      withExtendedLifetime(binding) {}
    }
    #expect(model.observerCount == observersBefore.0)
    #expect(field.observerCount == observersBefore.1)
    field.value = Draft(text: "b")
    #expect(model.value.text == "a")
  }

  @Test func cancellingTheTokenEndsTheBinding() {
    let model = Observable(1)
    let field = Observable(0)
    let breaker = EchoLoopBreaker()
    breaker.watch(model, field)
    let binding = model.bindBidirectionally(to: field)
    binding.cancel()
    model.value = 2
    field.value = 3
    #expect(model.value == 2)
    #expect(field.value == 3)
  }

  @Test func bindingKeepsNeitherSideAlive() {
    weak var weakModel: Observable<Draft>?
    weak var weakField: Observable<Draft>?
    let binding: ObservationToken
    do {
      let model = Observable(Draft(text: "a"))
      let field = Observable(Draft(text: ""))
      let breaker = EchoLoopBreaker()
      breaker.watch(model, field)
      weakModel = model
      weakField = field
      binding = model.bindBidirectionally(to: field)
    }
    #expect(weakModel == nil)
    #expect(weakField == nil)
    binding.cancel()
  }

  @Test func oneSideSetFromManyThreadsLeavesBothEqual() async {
    await onItsOwnThread {
      let model = Observable(0)
      let field = Observable(0)
      let breaker = EchoLoopBreaker()
      breaker.watch(model, field)
      let binding = model.bindBidirectionally(to: field)
      let modelLog = RecordingLog<Int>()
      let modelToken = model.observe { value, _ in modelLog.append(value) }
      runConcurrently(4) { _ in
        for _ in 0..<200 { field.update { $0 += 1 } }
      }
      #expect(field.value == 800)
      #expect(model.value == 800)
      #expect(modelLog.events == Array(1...800))
      withExtendedLifetime((binding, modelToken)) {}
    }
  }
}
