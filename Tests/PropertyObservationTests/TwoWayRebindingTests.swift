import PropertyObservation
import TestSupport
import Testing

/// A reused form cell: its field is bound two-way to whichever model it shows, and the tokens go
/// to a bag that lives as long as the cell, as an app writes it.
private final class FormCell {
  let field = Observable("")
  let bag = ObservationBag()

  func show(_ name: Observable<String>) {
    name.bindBidirectionally(to: field).store(in: bag)
  }
}

/// Three observables holding `values`, watched for echo loops while the breaker lives.
private func watchedTrio(
  _ values: (String, String, String)
) -> (Observable<String>, Observable<String>, Observable<String>, EchoLoopBreaker) {
  let trio = (Observable(values.0), Observable(values.1), Observable(values.2))
  let breaker = EchoLoopBreaker()
  breaker.watch(trio.0, trio.1, trio.2)
  return (trio.0, trio.1, trio.2, breaker)
}

@Suite("Two-way rebinding")
struct TwoWayRebindingTests {
  @Test func aReusedCellBoundToANewModelLeavesTheOldModelAloneInBothDirections() {
    let cell = FormCell()
    let oldName = Observable("Ray")
    let newName = Observable("Ada")
    let breaker = EchoLoopBreaker()
    breaker.watch(oldName, newName, cell.field)
    let log = RecordingLog<String>()
    let oldToken = oldName.observe { name, _ in log.append("old \(name)") }
    let newToken = newName.observe { name, _ in log.append("new \(name)") }
    let observersBefore = oldName.observerCount

    cell.show(oldName)
    cell.field.value = "Raymond"
    cell.show(newName)
    // Typed into the reused field: only the model it shows now takes it.
    cell.field.value = "Ada L."
    // A change of the model it showed before no longer reaches the field.
    oldName.value = "Ray C."
    // The model it shows now still does.
    newName.value = "Ada Lovelace"

    #expect(
      log.events == ["old Raymond", "new Ada L.", "old Ray C.", "new Ada Lovelace"])
    #expect(cell.field.value == "Ada Lovelace")
    // The old model's registration of the binding is gone, not just silent.
    #expect(oldName.observerCount == observersBefore)
    withExtendedLifetime((oldToken, newToken)) {}
  }

  @Test func rebindingAConvertingBindingEndsTheEarlierOne() {
    let field = Observable("")
    let oldQuantity = Observable(1)
    let newQuantity = Observable(7)
    let breaker = EchoLoopBreaker()
    breaker.watch(oldQuantity, newQuantity)
    breaker.watch(field)
    let first = oldQuantity.bindBidirectionally(
      to: field, forward: { String($0) }, backward: { Int($0) })
    let second = newQuantity.bindBidirectionally(
      to: field, forward: { String($0) }, backward: { Int($0) })

    #expect(field.value == "7")
    field.value = "12"
    oldQuantity.value = 3
    #expect((oldQuantity.value, newQuantity.value, field.value) == (3, 12, "12"))
    withExtendedLifetime((first, second)) {}
  }

  @Test func aOneWayBindingIntoAnObservableLeavesItsTwoWayBindingInPlace() {
    // Bond's DynamicSubjectTests: a feed bound into a subject that is bound two ways.
    let (target, subject, _, breaker) = watchedTrio(("0", "", ""))
    let feed = Observable("1")
    let log = RecordingLog<String>()
    let logging = target.observe { value, _ in log.append(value) }
    let twoWay = target.bindBidirectionally(to: subject)
    subject.value = "6"
    subject.value = "7"
    feed.bind(to: subject)
    feed.value = "2"
    feed.value = "3"
    #expect(log.events == ["6", "7", "1", "2", "3"])
    // And the other way, into the subject, which the feed does not undo until it changes.
    target.value = "8"
    #expect((subject.value, feed.value) == ("8", "3"))
    withExtendedLifetime((logging, twoWay, breaker)) {}
  }

  @Test func aTwoWayBindingOfAnObservableLeavesTheOneWayBindingIntoIt() {
    let (field, title, name, breaker) = watchedTrio(("", "title", "name"))
    title.bind(to: field)
    let twoWay = name.bindBidirectionally(to: field)
    #expect(field.value == "name")
    title.value = "title 2"
    #expect((field.value, name.value) == ("title 2", "title 2"))
    field.value = "typed"
    #expect((name.value, title.value) == ("typed", "title 2"))
    withExtendedLifetime((twoWay, breaker)) {}
  }

  @Test func rebindingReplacesOnlyTheBindingOfTheSameKind() {
    let (field, oldTitle, newTitle, breaker) = watchedTrio(("", "old title", "new title"))
    let (oldName, newName) = (Observable("old name"), Observable("new name"))
    oldTitle.bind(to: field)
    let oldTwoWay = oldName.bindBidirectionally(to: field)
    newTitle.bind(to: field)  // replaces `oldTitle`'s one-way binding only
    let newTwoWay = newName.bindBidirectionally(to: field)  // replaces `oldName`'s only
    let log = RecordingLog<String>()
    let logging = field.observe { value, _ in log.append(value) }
    oldTitle.value = "old title 2"
    oldName.value = "old name 2"
    newTitle.value = "new title 2"
    newName.value = "new name 2"
    #expect(log.events == ["new title 2", "new name 2"])
    field.value = "typed"
    #expect(
      [oldTitle.value, oldName.value, newTitle.value, newName.value]
        == ["old title 2", "old name 2", "new title 2", "typed"])
    withExtendedLifetime((oldTwoWay, newTwoWay, logging, breaker)) {}
  }

  @Test func cancellingAReplacedTokenLeavesTheBindingThatReplacedIt() {
    let (field, oldName, newName, breaker) = watchedTrio(("", "Ray", "Ada"))
    let replaced = oldName.bindBidirectionally(to: field)
    let current = newName.bindBidirectionally(to: field)

    replaced.cancel()
    field.value = "typed"
    #expect((oldName.value, newName.value) == ("Ray", "typed"))
    newName.value = "Ada L."
    #expect(field.value == "Ada L.")
    withExtendedLifetime((current, breaker)) {}
  }

  @Test func rebindingOneFieldFromTwoThreadsAtOnceLeavesExactlyOneBinding() async {
    await onItsOwnThread {
      let field = Observable(-1)
      let models = [Observable(0), Observable(1)]
      let kept = RecordingLog<ObservationToken>()
      runConcurrently(2) { index in
        var token = models[index].bindBidirectionally(to: field)
        for _ in 0..<300 {
          // Each bind ends whichever binding the field had, this thread's or the other's,
          // possibly before that binding has made its registrations.
          token = models[index].bindBidirectionally(to: field)
        }
        kept.append(token)
      }
      // Both threads still hold a token, but only the binding installed last is alive.
      #expect(field.observerCount == 1)
      #expect(models[0].observerCount + models[1].observerCount == 1)
      field.value = 42
      #expect(models.map(\.value).filter { $0 == 42 }.count == 1)
      withExtendedLifetime(kept) {}
    }
  }

  @Test func oneModelBoundToTwoFieldsKeepsBothBindings() {
    let (name, form, summary, breaker) = watchedTrio(("Ray", "", ""))
    let tokens = [name.bindBidirectionally(to: form), name.bindBidirectionally(to: summary)]

    form.value = "Ada"
    #expect(summary.value == "Ada")
    summary.value = "Grace"
    #expect((name.value, form.value) == ("Grace", "Grace"))
    withExtendedLifetime((tokens, breaker)) {}
  }
}
