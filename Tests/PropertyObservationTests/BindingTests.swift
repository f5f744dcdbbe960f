import Dispatch
import PropertyObservation
import TestSupport
import Testing

@Suite("Key-path and observable bindings")
struct BindingTests {
  // MARK: - Applying values

  @MainActor @Test func bindAppliesTheCurrentValueAtOnceThenEveryChange() {
    let title = Observable("Home")
    let label = FakeLabel()
    title.bind(to: label, \.text)
    #expect(label.text == "Home")
    title.value = "Settings"
    title.value = "About"
    #expect(label.log.events == ["Home", "Settings", "About"])
  }

  @MainActor @Test func bindWritesNonOptionalProperties() {
    let model = FakeModel(title: "First")
    let cell = FakeCell()
    model.title.bind(to: cell, \.title)
    model.title.value = "Second"
    #expect(cell.log.events == ["title=First", "title=Second"])
  }

  @MainActor @Test func bindingOfAnOptionalValueUsesTheNonOptionalForm() {
    let subtitle = Observable<String?>(nil)
    let label = FakeLabel()
    subtitle.bind(to: label, \.text)
    subtitle.value = "Now"
    subtitle.value = nil
    #expect(label.log.events == ["nil", "Now", "nil"])
  }

  // MARK: - Lifetimes

  @MainActor @Test func bindingRetainsNeitherTargetNorSource() {
    weak var weakLabel: FakeLabel?
    weak var weakSource: Observable<String>?
    weak var weakBinding: PropertyBinding?
    do {
      let source = Observable("a")
      let label = FakeLabel()
      weakBinding = source.bind(to: label, \.text)
      weakLabel = label
      weakSource = source
    }
    #expect(weakLabel == nil)
    #expect(weakSource == nil)
    #expect(weakBinding == nil)
  }

  @MainActor @Test func bindingDoesNotKeepAnObservableSourceAliveWhileTheTargetLives() {
    let label = FakeLabel()
    weak var weakSource: Observable<String>?
    do {
      let source = Observable("a")
      source.bind(to: label, \.text)
      weakSource = source
    }
    #expect(weakSource == nil)
    #expect(label.text == "a")
  }

  @MainActor @Test func bindingEndsWhenTheTargetIsDeallocated() {
    let source = Observable("a")
    weak var weakLabel: FakeLabel?
    weak var weakBinding: PropertyBinding?
    do {
      let label = FakeLabel()
      weakBinding = source.bind(to: label, \.text)
      weakLabel = label
      #expect(source.observerCount == 1)
    }
    #expect(weakLabel == nil)
    #expect(source.observerCount == 0)
    source.value = "b"
    #expect(weakBinding == nil)
  }

  @MainActor @Test func droppingTheHandleDoesNotEndTheBinding() {
    let source = Observable(1)
    let cell = FakeCell()
    do {
      _ = source.map { "\($0)%" }.bind(to: cell, \.progressText)
    }
    source.value = 2
    #expect(cell.log.events == ["progress=1%", "progress=2%"])
  }

  @MainActor @Test func unbindEndsTheBinding() {
    let source = Observable("a")
    let label = FakeLabel()
    let binding = source.bind(to: label, \.text)
    source.value = "b"
    binding.unbind()
    source.value = "c"
    binding.unbind()
    #expect(label.log.events == ["a", "b"])
  }

  @MainActor @Test func removeObserverEndsTheBinding() {
    let source = Observable("a")
    let label = FakeLabel()
    source.bind(to: label, \.text)
    source.removeObserver(label)
    source.value = "b"
    #expect(label.log.events == ["a"])
    #expect(source.observerCount == 0)
  }

  @MainActor @Test func bindingAgainAfterRemoveObserverWorks() {
    let source = Observable("a")
    let label = FakeLabel()
    source.bind(to: label, \.text)
    source.removeObserver(label)
    source.value = "b"
    source.bind(to: label, \.text)
    source.value = "c"
    #expect(label.log.events == ["a", "b", "c"])
  }

  @MainActor @Test func unbindingAnInlineChainReleasesIt() {
    let source = Observable(1)
    let cell = FakeCell()
    weak var weakChain: ReadOnlyObservable<String>?
    let binding: PropertyBinding
    do {
      let chain = source.map { "\($0)%" }
      weakChain = chain
      binding = chain.bind(to: cell, \.progressText)
    }
    #expect(weakChain != nil)
    binding.unbind()
    #expect(weakChain == nil)
    #expect(source.observerCount == 0)
  }

  @MainActor @Test func aKeptHandleDoesNotKeepTheChainAliveAfterTheTargetDies() {
    let source = Observable(1)
    weak var weakChain: ReadOnlyObservable<String>?
    let binding: PropertyBinding
    do {
      let cell = FakeCell()
      let chain = source.map { "\($0)%" }
      weakChain = chain
      binding = chain.bind(to: cell, \.progressText)
    }
    source.value = 2
    #expect(weakChain == nil)
    #expect(source.observerCount == 0)
    binding.unbind()
  }

  // MARK: - Rebinding

  @MainActor @Test func rebindingReplacesTheEarlierBinding() {
    let first = FakeModel(title: "A")
    let second = FakeModel(title: "B")
    let cell = FakeCell()
    first.title.bind(to: cell, \.title)
    second.title.bind(to: cell, \.title)
    first.title.value = "A2"
    second.title.value = "B2"
    first.title.value = "A3"
    #expect(cell.log.events == ["title=A", "title=B", "title=B2"])
  }

  @MainActor @Test func rebindingTheSameSourceDoesNotDuplicateUpdates() {
    let model = FakeModel(title: "A")
    let cell = FakeCell()
    model.title.bind(to: cell, \.title)
    model.title.bind(to: cell, \.title)
    model.title.value = "B"
    #expect(cell.log.events == ["title=A", "title=A", "title=B"])
  }

  @MainActor @Test func rebindingOneKeyPathLeavesTheTargetsOtherBindings() {
    let first = FakeModel(title: "A", progress: 1)
    let second = FakeModel(title: "B")
    let cell = FakeCell()
    first.title.bind(to: cell, \.title)
    first.progress.map { "\($0)%" }.bind(to: cell, \.progressText)
    second.title.bind(to: cell, \.title)
    first.progress.value = 2
    first.title.value = "A2"
    #expect(cell.log.events == ["title=A", "progress=1%", "title=B", "progress=2%"])
  }

  @MainActor @Test func reusedCellShowsOnlyTheModelItWasLastBoundTo() {
    @MainActor final class ReusableCell {
      let log = RecordingLog<String>()
      var progressText = "" {
        didSet { log.append(progressText) }
      }

      @MainActor func show(_ model: FakeModel) {
        model.progress.map { "\(model.title.value) \($0)%" }.bind(to: self, \.progressText)
      }
    }
    let cell = ReusableCell()
    weak var weakOldProgress: Observable<Int>?
    let newModel = FakeModel(title: "new", progress: 5)
    do {
      let oldModel = FakeModel(title: "old", progress: 1)
      weakOldProgress = oldModel.progress
      cell.show(oldModel)
      oldModel.progress.value = 2
      cell.show(newModel)
      oldModel.progress.value = 3
    }
    // The old model's chain was released by the rebinding, and with it the old model.
    #expect(weakOldProgress == nil)
    newModel.progress.value = 6
    #expect(cell.log.events == ["old 1%", "old 2%", "new 5%", "new 6%"])
  }

  // MARK: - Inline chains

  @MainActor @Test func inlineChainKeepsDeliveringEveryChangeWhileTheTargetLives() {
    let model = FakeModel(title: "m")
    let cell = FakeCell()
    @MainActor func show(_ model: FakeModel) {
      model.progress.map { "\($0)%" }.removeDuplicates().bind(to: cell, \.progressText)
    }
    show(model)
    for value in [10, 10, 20, 30] { model.progress.value = value }
    #expect(cell.log.events == ["progress=0%", "progress=10%", "progress=20%", "progress=30%"])
  }

  @MainActor @Test func inlineChainIsReleasedWhenTheTargetDies() {
    let model = FakeModel(title: "m")
    weak var weakChain: ReadOnlyObservable<String>?
    weak var weakCell: FakeCell?
    do {
      let cell = FakeCell()
      weakCell = cell
      let chain = model.progress.map { "\($0)%" }
      weakChain = chain
      chain.bind(to: cell, \.progressText)
    }
    #expect(weakCell == nil)
    // At the latest at the source's next change, the chain notices and lets go.
    model.progress.value = 1
    #expect(weakChain == nil)
    #expect(model.progress.observerCount == 0)
  }

  @MainActor @Test func inlineChainOrderHoldsWhenTheTargetSetsTheSourceReentrantly() {
    @MainActor final class Echoing {
      let log = RecordingLog<Int>()
      let source: Observable<Int>
      var value = 0 {
        didSet {
          log.append(value)
          if value < 40 { source.value = value / 10 + 1 }
        }
      }

      @MainActor init(source: Observable<Int>) {
        self.source = source
      }
    }
    let source = Observable(1)
    let target = Echoing(source: source)
    source.map { $0 * 10 }.bind(to: target, \.value)
    #expect(target.log.events == [10, 20, 30, 40])
  }

  // MARK: - Binding to another observable

  @Test func bindToAnObservableAppliesTheCurrentValueThenEveryChange() {
    let source = Observable(1)
    let mirror = Observable(0)
    let log = RecordingLog<Int>()
    let token = mirror.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    source.bind(to: mirror)
    source.value = 2
    #expect(mirror.value == 2)
    #expect(log.events == [0, 1, 2])
    token.cancel()
  }

  @Test func bindToAnObservableIsOwnedByTheTargetObservable() {
    let source = Observable(1)
    weak var weakMirror: Observable<Int>?
    do {
      let mirror = Observable(0)
      weakMirror = mirror
      source.bind(to: mirror)
      #expect(mirror.value == 1)
    }
    #expect(weakMirror == nil)
    #expect(source.observerCount == 0)

    let mirror = Observable(0)
    weak var weakSource: Observable<Int>?
    do {
      let other = Observable(7)
      weakSource = other
      other.bind(to: mirror)
    }
    #expect(weakSource == nil)
    #expect(mirror.value == 7)
  }

  @Test func bindingAnObservableAgainReplacesItsEarlierSource() {
    let first = Observable("first")
    let second = Observable("second")
    let mirror = Observable("")
    first.bind(to: mirror)
    second.bind(to: mirror)
    first.value = "first changed"
    #expect(mirror.value == "second")
    second.value = "second changed"
    #expect(mirror.value == "second changed")
  }

  @MainActor @Test func bindingToAnObservableChainsIntoItsBindings() {
    let source = Observable(1)
    let mirror = Observable(0)
    let label = FakeLabel()
    source.bind(to: mirror)
    mirror.map { "#\($0)" }.bind(to: label, \.text)
    source.value = 2
    #expect(label.log.events == ["#1", "#2"])
  }

  // MARK: - Threads

  @Test func keyPathBindingAppliesChangesFromManyThreadsInOrder() async {
    await onItsOwnThread {
      // Written on the delivering threads: a property any thread may set.
      final class LoggingCell: Sendable {
        let log = RecordingLog<String>()
        var progressText: String {
          get { log.events.last ?? "" }
          set { log.append("progress=\(newValue)") }
        }
      }
      let source = Observable(0)
      let cell = LoggingCell()
      source.map { "\($0)" }.bind(to: cell, \.progressText)
      runConcurrently(4) { _ in
        for _ in 0..<200 { source.update { $0 += 1 } }
      }
      #expect(cell.log.events == (0...800).map { "progress=\($0)" })
    }
  }

  @Test func rebindingFromManyThreadsLeavesOnlyTheLastBinding() async {
    await onItsOwnThread {
      // Bindings from different sources write from different threads at once, so the property
      // itself must be thread-safe; the test is about which binding is left.
      final class SharedCell: Sendable {
        let log = RecordingLog<Int>()
        var value: Int {
          get { log.events.last ?? 0 }
          set { log.append(newValue) }
        }
      }
      let cell = SharedCell()
      let models = (0..<4).map { Observable($0 * 1000) }
      runConcurrently(4) { index in
        for step in 1...50 {
          models[index].bind(to: cell, \.value)
          models[index].value = index * 1000 + step
        }
      }
      let last = Observable(-1)
      last.bind(to: cell, \.value)
      let countBefore = cell.log.events.count
      for model in models { model.value += 1 }
      last.value = -2
      #expect(Array(cell.log.events.dropFirst(countBefore)) == [-2])
      #expect(cell.value == -2)
    }
  }
}
