import PropertyObservation
import Testing

// A model-based randomized test: seeded random scripts of registrations, removals, owner deaths,
// token releases, sets and reactions inside callbacks (nested sets, removals, deaths, new
// registrations) run against the library and against `ReferenceObservable`, a deliberately
// naive implementation of the contract written from its prose. The two delivery logs must be
// identical, call for call.

/// What a registration's callback does after logging, chosen at random per registration.
private enum Reaction: Equatable {
  case none
  /// On `.new` with a value below 1000, sets `value + 1000` (so reactions cannot loop forever).
  case nestedSet
  case removeOwner(Int)
  case dropOwner(Int)
  case cancelToken(Int)
  /// On `.new` with a value below 1000, registers owner slot `slot` with `options`.
  case register(slot: Int, options: ObservableOptions)
}

private enum Step {
  case add(slot: Int, options: ObservableOptions, replacing: Bool, reaction: Reaction)
  case addToken(options: ObservableOptions, reaction: Reaction)
  case remove(slot: Int)
  case dropOwner(slot: Int)
  case reviveOwner(slot: Int)
  case cancelToken(Int)
  case set(Int)
}

private struct ScriptedCall: Equatable, CustomStringConvertible {
  let registration: Int
  let option: ObservableOptionsName
  let value: Int
  var description: String { "#\(registration).\(option)(\(value))" }
}

private let slotCount = 4

// MARK: - The reference model

/// The contract, implemented as plainly as possible: each change gets a version; a registration
/// receives the changes made after it registered; a round walks the registrations in order,
/// `.old` pass then `.new` pass, skipping removed ones and those whose owner is dead; changes made
/// during a round wait in a queue.
private final class ReferenceObservable {
  struct Registration {
    let id: Int
    let slot: Int?
    let generation: Int
    let token: Int?
    let options: ObservableOptions
    let reaction: Reaction
    let registeredAt: Int
    var isRemoved = false
  }

  var value = 0
  var version = 0
  var registrations: [Registration] = []
  var generations = Array(repeating: 0, count: slotCount)
  var alive = Array(repeating: true, count: slotCount)
  var liveTokens: Set<Int> = []
  var queue: [(old: Int, new: Int, version: Int)] = []
  var isDelivering = false
  var log: [ScriptedCall] = []
  var nextID = 0

  func register(
    slot: Int?, token: Int?, options: ObservableOptions, replacing: Bool, reaction: Reaction
  ) {
    if let slot, replacing { remove(slot: slot) }
    let id = nextID
    nextID += 1
    if let slot, !alive[slot] { return }
    registrations.append(
      Registration(
        id: id, slot: slot, generation: slot.map { generations[$0] } ?? 0, token: token,
        options: options, reaction: reaction, registeredAt: version))
    if options.contains(.initial) { call(registrations.count - 1, .initial, value) }
  }

  func remove(slot: Int) {
    for index in registrations.indices
    where registrations[index].slot == slot
      && registrations[index].generation == generations[slot]
    {
      registrations[index].isRemoved = true
    }
  }

  func cancel(token: Int) {
    liveTokens.remove(token)
    for index in registrations.indices where registrations[index].token == token {
      registrations[index].isRemoved = true
    }
  }

  func drop(slot: Int) { alive[slot] = false }

  func revive(slot: Int) {
    if !alive[slot] {
      alive[slot] = true
      generations[slot] += 1
    }
  }

  func set(_ newValue: Int) {
    let old = value
    value = newValue
    version += 1
    queue.append((old, newValue, version))
    guard !isDelivering else { return }
    isDelivering = true
    while !queue.isEmpty {
      let change = queue.removeFirst()
      round(change.old, change.new, change.version)
    }
    isDelivering = false
  }

  private func isLive(_ registration: Registration) -> Bool {
    if registration.isRemoved { return false }
    if let token = registration.token { return liveTokens.contains(token) }
    guard let slot = registration.slot else { return false }
    return alive[slot] && generations[slot] == registration.generation
  }

  private func round(_ old: Int, _ new: Int, _ changeVersion: Int) {
    let count = registrations.count
    for (option, value) in [(ObservableOptions.old, old), (.new, new)] {
      for index in 0..<count {
        let registration = registrations[index]
        guard registration.registeredAt < changeVersion, registration.options.contains(option),
          isLive(registration)
        else { continue }
        call(index, option, value)
      }
    }
  }

  private func call(_ index: Int, _ option: ObservableOptions, _ value: Int) {
    let registration = registrations[index]
    log.append(ScriptedCall(registration: registration.id, option: .init(option), value: value))
    // Reactions run on changes only: the harness cannot cancel a token inside its own `observe`.
    guard option != .initial else { return }
    switch registration.reaction {
    case .none: break
    case .nestedSet: if option == .new && value < 1000 { set(value + 1000) }
    case .removeOwner(let slot): remove(slot: slot)
    case .dropOwner(let slot): drop(slot: slot)
    case .cancelToken(let token): cancel(token: token)
    case .register(let slot, let options):
      if option == .new && value < 1000 {
        register(slot: slot, token: nil, options: options, replacing: true, reaction: .none)
      }
    }
  }
}

// MARK: - The same script against the library

@MainActor
private final class LibraryHarness {
  let observable = Observable(0)
  var owners: [Owner?] = (0..<slotCount).map { _ in Owner() }
  var tokens: [Int: ObservationToken] = [:]
  var log: [ScriptedCall] = []
  var nextID = 0

  func register(
    slot: Int?, token: Int?, options: ObservableOptions, replacing: Bool, reaction: Reaction
  ) {
    let id = nextID
    nextID += 1
    let callback: @MainActor @Sendable (Int, ObservableOptions) -> Void = {
      [unowned self] value, option in
      self.log.append(ScriptedCall(registration: id, option: .init(option), value: value))
      self.react(reaction, option, value)
    }
    if let slot {
      // A dead slot has no object to register; the model skips it the same way.
      guard let owner = owners[slot] else { return }
      observable.addObserver(
        owner, removeIfExists: replacing, options: options, closure: callback)
    } else if let token {
      tokens[token] = observable.observe(options: options, callback)
    }
  }

  private func react(_ reaction: Reaction, _ option: ObservableOptions, _ value: Int) {
    guard option != .initial else { return }
    switch reaction {
    case .none: break
    case .nestedSet: if option == .new && value < 1000 { observable.value = value + 1000 }
    case .removeOwner(let slot): if let owner = owners[slot] { observable.removeObserver(owner) }
    case .dropOwner(let slot): owners[slot] = nil
    case .cancelToken(let token): tokens[token] = nil
    case .register(let slot, let options):
      if option == .new && value < 1000 {
        register(slot: slot, token: nil, options: options, replacing: true, reaction: .none)
      }
    }
  }
}

// MARK: - The test

@Suite("Observable against a reference model of its contract")
struct ObservableModelTests {
  @Test(arguments: 0..<400)
  @MainActor func randomScriptsDeliverExactlyWhatTheModelDelivers(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    let steps = (0..<40).map { _ in randomStep(&random) }
    let model = ReferenceObservable()
    let library = LibraryHarness()
    var tokenCount = 0
    for step in steps {
      switch step {
      case .add(let slot, let options, let replacing, let reaction):
        model.register(
          slot: slot, token: nil, options: options, replacing: replacing, reaction: reaction)
        library.register(
          slot: slot, token: nil, options: options, replacing: replacing, reaction: reaction)
      case .addToken(let options, let reaction):
        let token = tokenCount
        tokenCount += 1
        model.liveTokens.insert(token)
        model.register(
          slot: nil, token: token, options: options, replacing: false, reaction: reaction)
        library.register(
          slot: nil, token: token, options: options, replacing: false, reaction: reaction)
      case .remove(let slot):
        model.remove(slot: slot)
        if let owner = library.owners[slot] { library.observable.removeObserver(owner) }
      case .dropOwner(let slot):
        model.drop(slot: slot)
        library.owners[slot] = nil
      case .reviveOwner(let slot):
        model.revive(slot: slot)
        if library.owners[slot] == nil { library.owners[slot] = Owner() }
      case .cancelToken(let token):
        model.cancel(token: token)
        library.tokens[token] = nil
      case .set(let value):
        model.set(value)
        library.observable.value = value
      }
    }
    #expect(
      library.log == model.log,
      "seed \(seed): replay with randomScriptsDeliverExactlyWhatTheModelDelivers(seed: \(seed))")
    #expect(library.observable.value == model.value, "seed \(seed)")
  }
}

private func randomStep(_ random: inout SplitMix64) -> Step {
  func options() -> ObservableOptions {
    ObservableOptions(rawValue: Int.random(in: 0...7, using: &random))
  }
  func reaction() -> Reaction {
    switch Int.random(in: 0..<12, using: &random) {
    case 0, 1: .nestedSet
    case 2: .removeOwner(Int.random(in: 0..<slotCount, using: &random))
    case 3: .dropOwner(Int.random(in: 0..<slotCount, using: &random))
    case 4: .cancelToken(Int.random(in: 0..<4, using: &random))
    case 5: .register(slot: Int.random(in: 0..<slotCount, using: &random), options: options())
    default: .none
    }
  }
  let slot = Int.random(in: 0..<slotCount, using: &random)
  switch Int.random(in: 0..<14, using: &random) {
  case 0, 1, 2:
    return .add(
      slot: slot, options: options(), replacing: Bool.random(using: &random), reaction: reaction())
  case 3, 4: return .addToken(options: options(), reaction: reaction())
  case 5: return .remove(slot: slot)
  case 6: return .dropOwner(slot: slot)
  case 7: return .reviveOwner(slot: slot)
  case 8: return .cancelToken(Int.random(in: 0..<4, using: &random))
  default: return .set(Int.random(in: 0..<100, using: &random))
  }
}
