import Testing

@testable import PropertyObservation

@Suite("The binding registry")
struct BindingRegistryTests {
  @Test func recordsOfDeadTargetsDoNotPileUp() {
    let source = Observable("text")
    for _ in 0..<2_000 {
      let label = FakeLabel()
      source.bind(to: label, \.text)
    }
    source.value = "changed"
    #expect(source.observerCount == 0)
    // Other suites may bind concurrently, but only a handful of their targets are alive.
    #expect(BindingRegistry.shared.recordCount < 400)
  }

  @Test func rebindingATargetLeavesOneRegistrationPerSource() {
    let first = Observable("a")
    let second = Observable("b")
    let cell = FakeCell()
    for _ in 0..<100 {
      first.bind(to: cell, \.title)
      second.bind(to: cell, \.title)
    }
    #expect(first.observerCount == 1)
    #expect(second.observerCount == 1)
    second.value = "c"
    first.value = "z"
    #expect(cell.title == "c")
  }

  @Test func internalBoxesGoWithTheTarget() {
    let source = Observable(1)
    let title = Observable("t")
    weak var weakChain: ReadOnlyObservable<String>?
    weak var weakChainHub: BindingHub<String>?
    weak var weakSourceHub: BindingHub<String>?
    weak var weakBinding: PropertyBinding?
    do {
      let cell = FakeCell()
      let chain = source.map { "\($0)" }
      weakChain = chain
      weakBinding = chain.bind(to: cell, \.progressText)
      title.bind(to: cell, \.title)
      let chainHub = BindingRegistry.shared.hub(source: chain, target: cell) {
        BindingHub(target: cell)
      }
      let sourceHub = BindingRegistry.shared.hub(source: title, target: cell) {
        BindingHub(target: cell)
      }
      #expect(!chainHub.isNew)
      #expect(!sourceHub.isNew)
      weakChainHub = chainHub.hub
      weakSourceHub = sourceHub.hub
    }
    source.value = 2
    title.value = "u"
    #expect(weakChain == nil)
    #expect(weakChainHub == nil)
    #expect(weakSourceHub == nil)
    #expect(weakBinding == nil)
    #expect(source.observerCount == 0)
    #expect(title.observerCount == 0)
  }
}
