import Testing

@testable import PropertyObservation

@Suite("The binding registry")
struct BindingRegistryTests {
  @MainActor @Test func recordsOfDeadTargetsDoNotPileUp() {
    let source = Observable("text")
    for _ in 0..<2_000 {
      let label = FakeLabel()
      source.bind(to: label, \.text)
    }
    source.value = "changed"
    #expect(source.observerCount == 0)
    // Without pruning the 2 000 dead targets' records would all be there. Other suites bind
    // concurrently, and the table keeps up to twice the live records it found at its last
    // pruning (480 once under ThreadSanitizer, where suites overlap longer), so the bound
    // leaves room for them and still fails if dead records pile up.
    #expect(BindingRegistry.shared.recordCount < 1_000)
  }

  @MainActor @Test func rebindingATargetLeavesOneRegistrationOnTheCurrentSourceOnly() {
    let first = Observable("a")
    let second = Observable("b")
    let cell = FakeCell()
    for _ in 0..<100 {
      first.bind(to: cell, \.title)
      second.bind(to: cell, \.title)
    }
    #expect(first.observerCount == 0)
    #expect(second.observerCount == 1)
    second.value = "c"
    first.value = "z"
    #expect(cell.title == "c")
  }

  @MainActor @Test func theBindingAndItsChainGoWithTheTarget() {
    let source = Observable(1)
    let title = Observable("t")
    weak var weakChain: ReadOnlyObservable<String>?
    weak var weakChainBinding: PropertyBinding?
    weak var weakTitleBinding: PropertyBinding?
    do {
      let cell = FakeCell()
      let chain = source.map { "\($0)" }
      weakChain = chain
      weakChainBinding = chain.bind(to: cell, \.progressText)
      weakTitleBinding = title.bind(to: cell, \.title)
      // The registrations keep their bindings while the cell lives, even though nobody else
      // holds them.
      #expect(weakChainBinding != nil)
      #expect(weakTitleBinding != nil)
    }
    source.value = 2
    title.value = "u"
    #expect(weakChain == nil)
    #expect(weakChainBinding == nil)
    #expect(weakTitleBinding == nil)
    #expect(source.observerCount == 0)
    #expect(title.observerCount == 0)
  }
}
