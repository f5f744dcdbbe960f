import PropertyObservation
import TestSupport
import Testing

@Suite("Binding a value to a binder of optionals")
struct OptionalBinderTests {
  @MainActor @Test func aNonOptionalSourceFeedsABinderOfOptionals() {
    let title = Observable("Ray")
    let label = DriverTestLabel()
    let log = RecordingLog<String?>()
    let binder = Binder<String?>(label, scheduler: .immediate) { label, text in
      label.text = text
      log.append(text)
    }
    title.bind(to: binder)
    title.value = "Ada"
    #expect(label.text == "Ada")
    #expect(log.events == ["Ray", "Ada"])
  }

  @MainActor @Test func anOptionalSourceStillFeedsItsOwnBinderType() {
    let title = Observable<String?>(nil)
    let label = DriverTestLabel()
    title.bind(to: Binder<String?>(label, scheduler: .immediate) { $0.text = $1 })
    title.value = "Ada"
    #expect(label.text == "Ada")
  }

  @MainActor @Test func theBindingIsOwnedByTheBindersTargetAndKeepsAnInlineChainUntilItGoes() {
    let count = Observable(1)
    weak var weakChain: ReadOnlyObservable<String>?
    do {
      let label = DriverTestLabel()
      let chain = count.map { "\($0)" }
      weakChain = chain
      chain.bind(to: Binder<String?>(label, scheduler: .immediate) { $0.text = $1 })
      count.value = 2
      #expect(label.text == "2")
      count.removeObserver(label)  // not the chain's owner: nothing happens
      chain.removeObserver(label)
      count.value = 3
      #expect(label.text == "2")
    }
    #expect(weakChain == nil)
    #expect(count.observerCount == 0)
  }

  @MainActor @Test func valuesSetOnAnotherThreadReachTheTargetOnTheMainQueueInOrder() async {
    await onItsOwnThread {
      let main = ManualScheduler()
      let count = Observable(0)
      let label = DriverTestLabel()
      let log = RecordingLog<Int?>()
      count.bind(
        to: Binder<Int?>(label, scheduler: .manual(main)) { _, value in log.append(value) })
      runInBackground {
        for value in 1...3 { count.value = value }
      }.waitUntilFinished()
      main.runAll()
      #expect(log.events == [0, 1, 2, 3])
    }
  }
}
