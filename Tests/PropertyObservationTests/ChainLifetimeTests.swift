import PropertyObservation
import TestSupport
import Testing

/// A screen that records what its registrations receive; the test owns it.
@MainActor private final class Screen {
  let log = RecordingLog<String>()
}

/// The operators whose result a screen observes inline, each as a name and a chain built on a
/// source of `Int`.
private let inlineChains: [(String, @Sendable (Observable<Int>) -> ReadOnlyObservable<String>)] =
  [
    ("map", { $0.map { "\($0)" } }),
    ("removeDuplicates", { $0.removeDuplicates().map { "\($0)" } }),
    ("combineLatest", { $0.combineLatest(Observable(0)).map { "\($0.0)" } }),
    ("filter", { $0.filter(initial: 0) { _ in true }.map { "\($0)" } }),
    ("flatMapLatest", { source in source.flatMapLatest { _ in source }.map { "\($0)" } }),
  ]

/// How a screen registers on a chain with itself as the owner.
private enum OwnerRegistration: CaseIterable, CustomStringConvertible {
  case observeWith, addObserver

  var description: String {
    switch self {
    case .observeWith: "observe(with:)"
    case .addObserver: "addObserver"
    }
  }

  @MainActor func register(_ screen: Screen, on chain: ReadOnlyObservable<String>) {
    switch self {
    case .observeWith:
      chain.observe(with: screen, options: [.initial, .new]) { screen, value in
        screen.log.append(value)
      }
    case .addObserver:
      chain.addObserver(screen, options: [.initial, .new]) { [weak screen] value, _ in
        screen?.log.append(value)
      }
    }
  }
}

/// The rule stated in Bindings and Lifetimes: a registration keeps the chain it observes alive
/// for as long as the registration lasts (its owner lives, its token is held), and no longer.
@Suite("Chain lifetimes")
struct ChainLifetimeTests {
  @Test(arguments: OwnerRegistration.allCases, 0..<inlineChains.count)
  @MainActor
  fileprivate func anOwnersRegistrationOnAnInlineChainKeepsItDeliveringWhileTheOwnerLives(
    registration: OwnerRegistration, chainIndex: Int
  ) {
    let (name, makeChain) = inlineChains[chainIndex]
    let source = Observable(1)
    let screen = Screen()
    registration.register(screen, on: makeChain(source))
    for value in 2...4 { source.value = value }
    #expect(screen.log.events == ["1", "2", "3", "4"], "\(name), \(registration)")
  }

  @Test(arguments: OwnerRegistration.allCases)
  @MainActor fileprivate func theChainGoesAtTheSourcesNextChangeAfterTheOwnerDies(
    registration: OwnerRegistration
  ) {
    let source = Observable(1)
    weak var weakChain: ReadOnlyObservable<String>?
    weak var weakScreen: Screen?
    do {
      let screen = Screen()
      let chain = source.map { "\($0)" }.removeDuplicates()
      weakChain = chain
      weakScreen = screen
      registration.register(screen, on: chain)
      source.value = 2
      #expect(screen.log.events == ["1", "2"])
    }
    #expect(weakScreen == nil)
    // No deallocation hook tells the chain that its owner died: its next change does.
    source.value = 3
    #expect(weakChain == nil)
    #expect(source.observerCount == 0)
  }

  @MainActor @Test func removingTheOwnerFromTheChainReleasesItAtOnce() {
    let source = Observable(1)
    let screen = Screen()
    weak var weakChain: ReadOnlyObservable<String>?
    do {
      let chain = source.map { "\($0)" }
      weakChain = chain
      chain.observe(with: screen) { screen, value in screen.log.append(value) }
    }
    source.value = 2
    weakChain?.removeObserver(screen)
    #expect(weakChain == nil)
    #expect(source.observerCount == 0)
    source.value = 3
    #expect(screen.log.events == ["2"])
  }

  @Test func aTokenKeepsItsChainUntilItIsCancelled() {
    let source = Observable(1)
    let log = RecordingLog<String>()
    weak var weakChain: ReadOnlyObservable<String>?
    let token: ObservationToken
    do {
      let chain = source.map { "\($0)" }
      weakChain = chain
      token = chain.observe { value, _ in log.append(value) }
    }
    source.value = 2
    token.cancel()
    #expect(weakChain == nil)
    #expect(source.observerCount == 0)
    source.value = 3
    #expect(log.events == ["2"])
  }

  @MainActor @Test func anOwnersRegistrationOnAnObservableDoesNotKeepItAlive() {
    let screen = Screen()
    weak var weakSource: Observable<Int>?
    do {
      let source = Observable(1)
      weakSource = source
      source.observe(with: screen) { screen, value in screen.log.append("\(value)") }
      source.addObserver(screen) { _, _ in }
    }
    #expect(weakSource == nil)
  }

  @MainActor @Test func anOwnersRegistrationOnAnInlineArrayMapKeepsItDelivering() {
    let todos = ObservableArray(["a"])
    let screen = Screen()
    todos.map { $0.uppercased() }.addObserver(screen, options: [.initial, .new]) {
      [weak screen] change in
      screen?.log.append(change.elements.joined())
    }
    todos.append("b")
    #expect(screen.log.events == ["A", "AB"])
  }
}
