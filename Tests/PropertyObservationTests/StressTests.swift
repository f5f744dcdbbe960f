import Dispatch
import Foundation
import PropertyObservation
import Synchronization
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// Multi-threaded stress with exact delivery accounting (issues 18 and 12).
//
// Eight threads run a seeded random mix of operations on two `Observable<Int>`s: sets, token and
// owner registrations (some with `.initial`, so they race the deliverer), removals, cancels,
// dropped owners and tokens, tokens owned by other registrations' closures (ending one ends the
// other from inside the engine; `StressFindingsTests` keeps the smallest programs of the
// deadlocks this variant found), bindings of short-lived targets (whose addresses the allocator
// hands to the next token), and rebinding across sources. Permanent observers nest sets from
// their callbacks (with a stopping rule) and rebind long-lived labels inside rounds.
//
// Every value encodes the thread that set it and a global stamp taken just before the set, so the
// logs alone tell which changes each registration had to see. Callback logs are plain arrays: the
// engine runs one round at a time and hands the deliverer role over under its lock, so these
// accesses are ordered by the library (ThreadSanitizer checks that claim on every run).
//
// Size: `STRESS_OPERATIONS` operations per thread (default 1 500: 1-3 s in debug, 6-9 s under
// ThreadSanitizer on two cores). A soak run raises it and may fix the seed:
//
//     STRESS_OPERATIONS=10000 STRESS_SEED=42 swift test --filter StressTests
//
// The time grows faster than the count (10 000 took 55 s in debug); a stack sample of such a run
// showed threads queueing on the lock while a removal scanned the pending queue (issue 12).
//
// A failure prints the seed; rerun with `STRESS_SEED=<seed>` to replay the same script (thread
// interleavings differ from run to run, so a rare failure may need several runs).

private let threadCount = 8
private let defaultOperations = 1_500

private var environmentOperations: Int {
  ProcessInfo.processInfo.environment["STRESS_OPERATIONS"].flatMap { Int($0) } ?? defaultOperations
}

private var environmentSeed: UInt64 {
  ProcessInfo.processInfo.environment["STRESS_SEED"].flatMap { UInt64($0) }
    ?? .random(in: 1...UInt64.max)
}

// MARK: - Values

/// A value set during the run: `stamp << 6 | flags | thread`, where `stamp` comes from the run's
/// clock just before the set and `thread` is the index of the setting thread (8 is the test's
/// own thread).
private enum StressValue {
  static let nested = 16
  static let crossSource = 32

  static func make(stamp: Int, thread: Int, flags: Int = 0) -> Int {
    stamp << 6 | flags | thread
  }

  static func stamp(_ value: Int) -> Int { value >> 6 }
  static func thread(_ value: Int) -> Int { value & 15 }
  static func isNested(_ value: Int) -> Bool { value & nested != 0 }
  static func isCrossSource(_ value: Int) -> Bool { value & crossSource != 0 }

  /// A well-mixed number derived from a value, for decisions made inside callbacks.
  static func hash(_ value: Int) -> Int {
    var bits = UInt64(truncatingIfNeeded: stamp(value)) &* 0x9E37_79B9_7F4A_7C15
    bits ^= bits >> 29
    return Int(truncatingIfNeeded: bits & 0xFFFF_FFFF)
  }
}

/// A deterministic generator for a worker's script (the split-mix finalizer).
private struct ScriptRandom {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next(_ bound: Int) -> Int {
    state &+= 0x9E37_79B9_7F4A_7C15
    var bits = state
    bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
    bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
    bits ^= bits >> 31
    return Int(bits % UInt64(bound))
  }

  mutating func chance(_ percent: Int) -> Bool { next(100) < percent }
}

// MARK: - Clock, threads and logs

/// The run's global order of events: stamps before sets, after ends, and at every call. Relaxed,
/// so it adds no synchronization that could hide a race from ThreadSanitizer.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class StressClock: Sendable {
  private let counter = Atomic<Int>(0)

  func tick() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue }
  var now: Int { counter.load(ordering: .relaxed) }
}

/// What one thread did and saw; touched only by its own thread while the run lasts.
private final class ThreadLedger: @unchecked Sendable {
  let index: Int
  /// Per source, the values this thread set (directly or from a callback), in order.
  var setValues: [[Int]] = [[], []]
  /// Per source, re-entrant sets made on this thread whose round has not been delivered yet.
  var outstanding: [[Int]] = [[], []]
  var violations: [String] = []

  init(index: Int) { self.index = index }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  /// The ledger of the calling thread, if it is one of the run's threads.
  static var current: ThreadLedger? {
    pthread_getspecific(key).map { Unmanaged<ThreadLedger>.fromOpaque($0).takeUnretainedValue() }
  }

  /// Makes `ledger` the calling thread's ledger (`nil` to clear it).
  static func install(_ ledger: ThreadLedger?) {
    pthread_setspecific(key, ledger.map { Unmanaged.passUnretained($0).toOpaque() })
  }
}

/// One registration and every call it received.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class Registration: @unchecked Sendable {
  struct Call {
    let option: ObservableOptions
    let value: Int
    /// The clock when the callback ran.
    let time: Int
    /// The registration's owner had already been deinitialized.
    let afterOwnerDeath: Bool
  }

  let name: String
  let source: Int
  let options: ObservableOptions
  let owner: OwnerRecord?
  /// Appended to by whichever thread delivers (the engine orders them).
  var calls: [Call] = []
  /// Written by the registering thread only.
  var endedAt: Int?
  /// Whether the end is a cancel, a removal or a death whose time is known (a token owned by a
  /// dead owner's closure ends whenever the engine prunes that owner: no time to check).
  var endIsTimed = true
  var isLive = true
  /// Set by the `.initial` call; read by the registering thread right after registering.
  var initialValue: Int?
  var initialWasSynchronous = true

  init(name: String, source: Int, options: ObservableOptions, owner: OwnerRecord? = nil) {
    self.name = name
    self.source = source
    self.options = options
    self.owner = owner
  }

  func record(_ value: Int, _ option: ObservableOptions, clock: StressClock) {
    let dead = owner.map { $0.diedAt.load(ordering: .relaxed) != 0 } ?? false
    if option == .initial { initialValue = value }
    calls.append(Call(option: option, value: value, time: clock.now, afterOwnerDeath: dead))
  }

  static let ownerDeath = "owner's death"

  /// How the registration ended, for failure messages.
  var ending = ""

  func end(at time: Int, timed: Bool = true, by ending: String) {
    guard isLive else { return }
    isLive = false
    self.ending = ending
    endedAt = time
    endIsTimed = timed
  }
}

/// When an owner died, readable from the threads that deliver to it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class OwnerRecord: Sendable {
  let diedAt = Atomic<Int>(0)
}

/// An owner the size of an `ObservationToken`, so that the allocator hands a dead one's address
/// to the next token or binding handle.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class StressOwner: @unchecked Sendable {
  let record = OwnerRecord()
  private let clock: StressClock

  init(clock: StressClock) { self.clock = clock }

  deinit { record.diedAt.store(clock.tick(), ordering: .relaxed) }
}

/// A binding target. Its property may be written by two delivering threads at once (an ended
/// binding may still apply its in-flight change), hence the lock.
private final class StressLabel: @unchecked Sendable {
  private let lock = NSLock()
  private var storage = -1

  var value: Int {
    get { lock.withLock { storage } }
    set { lock.withLock { storage = newValue } }
  }
}

/// Starts `count` threads that wait at a common gate, runs `body(index)` on each, and reports
/// whether all finished within `seconds` (a deadlock fails the test instead of hanging it).
private func runThreads(
  _ count: Int, within seconds: Double, _ body: @escaping @Sendable (Int) -> Void
) -> Bool {
  final class Counter: @unchecked Sendable {
    var finished = 0  // guarded by `condition`
  }
  let condition = NSCondition()
  let counter = Counter()
  let gate = DispatchSemaphore(value: 0)
  for index in 0..<count {
    let thread = Thread {
      // The start signal; a lost one fails the run by its deadline instead of hanging here.
      _ = gate.wait(timeout: .now() + 60)
      body(index)
      condition.lock()
      counter.finished += 1
      condition.signal()
      condition.unlock()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  for _ in 0..<count { gate.signal() }
  let deadline = Date(timeIntervalSinceNow: seconds)
  condition.lock()
  defer { condition.unlock() }
  while counter.finished < count {
    if !condition.wait(until: deadline) { return counter.finished == count }
  }
  return true
}

// MARK: - The run

/// Something a worker holds and may end later.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private enum Holding {
  /// A token and the registrations that end with it (its own, and a token its closure owns).
  case token(HeldToken)
  case owner(OwnedRegistrations)
  /// A target bound to `source`.
  case label(StressLabel, BoundLabel)
}

/// The only strong reference to a token, so that the worker knows when it dies.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class HeldToken {
  var token: ObservationToken?
  let registrations: [Registration]

  init(_ token: ObservationToken, _ registrations: [Registration]) {
    self.token = token
    self.registrations = registrations
  }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class OwnedRegistrations {
  /// The only strong reference to the owner.
  var owner: StressOwner?
  var registrations: [Registration] = []
  /// A token the owner's closures keep alive, which ends when the owner's registration does.
  var ownedToken: Registration?

  init(owner: StressOwner) { self.owner = owner }
}

/// What one worker made and holds; touched by that worker only while the run lasts.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class WorkerRecords {
  var registrations: [Registration] = []
  var holdings: [Holding] = []
}

private final class BoundLabel: @unchecked Sendable {
  var source: Int
  var binding: PropertyBinding

  init(source: Int, binding: PropertyBinding) {
    self.source = source
    self.binding = binding
  }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private final class StressRun: @unchecked Sendable {
  static let permanentPerSource = 4
  static let labelCount = 4
  /// A direct set whose hash is a multiple of this makes a permanent observer set again.
  static let nestEvery = 5
  /// A value whose hash is a multiple of this makes a permanent observer rebind a label.
  static let rebindEvery = 7

  let seed: UInt64
  let operations: Int
  /// Whether the mix includes closures that own another token of the same source.
  let closuresOwnTokens: Bool
  let clock = StressClock()
  let sources = (0..<2).map { _ in Observable(StressValue.make(stamp: 0, thread: 15)) }
  let ledgers = (0...threadCount).map { ThreadLedger(index: $0) }
  /// The `[.old, .new]` token and owner every source keeps for the whole run.
  var permanent: [[Registration]] = []
  private var permanentTokens: [ObservationToken] = []
  private let permanentOwner = NSObject()
  /// Long-lived labels, rebound inside the rounds of their home source (label `i` lives on
  /// source `i % 2`, so one thread at a time rebinds it).
  let labels = (0..<labelCount).map { _ in StressLabel() }
  var labelBindings: [BoundLabel] = []
  /// Per worker, every registration it made and what it still holds at the end.
  let workers = (0..<threadCount).map { _ in WorkerRecords() }
  private let strays = NSLock()
  private var strayCalls = 0

  init(seed: UInt64, operations: Int, closuresOwnTokens: Bool) {
    self.seed = seed
    self.operations = operations
    self.closuresOwnTokens = closuresOwnTokens
    for (index, label) in labels.enumerated() {
      let home = index % 2
      labelBindings.append(
        BoundLabel(source: home, binding: sources[home].bind(to: label, \.value)))
    }
    for source in 0..<2 { installPermanentObservers(on: source) }
  }

  var strayCallCount: Int { strays.withLock { strayCalls } }

  private func installPermanentObservers(on index: Int) {
    let source = sources[index]
    let recorder = Registration(name: "permanent token", source: index, options: [.old, .new])
    let owned = Registration(name: "permanent owner", source: index, options: [.old, .new])
    permanent.append([recorder, owned])
    permanentTokens.append(
      source.observe(options: [.old, .new]) { [clock] value, option in
        recorder.record(value, option, clock: clock)
      })
    source.addObserver(permanentOwner, options: [.old, .new]) { [clock] value, option in
      owned.record(value, option, clock: clock)
    }
    permanentTokens.append(source.observe { [unowned self] value, _ in nest(value, on: index) })
    permanentTokens.append(source.observe { [unowned self] value, _ in rebind(value, on: index) })
  }

  /// Sets a value again from a callback: a re-entrant set of the same source, or a set of the
  /// other source. Only direct sets trigger one, so the cascade stops.
  private func nest(_ value: Int, on index: Int) {
    guard let ledger = ThreadLedger.current else {
      strays.withLock { strayCalls += 1 }
      return
    }
    if StressValue.isNested(value) {
      if let position = ledger.outstanding[index].firstIndex(of: value) {
        ledger.outstanding[index].remove(at: position)
      } else {
        ledger.violations.append(
          "re-entrant set \(value) of source \(index) was delivered by thread \(ledger.index), "
            + "not by the thread that made it")
      }
      return
    }
    guard !StressValue.isCrossSource(value) else { return }
    let hash = StressValue.hash(value)
    if hash % Self.nestEvery == 0 {
      let nested = StressValue.make(
        stamp: clock.tick(), thread: ledger.index, flags: StressValue.nested)
      ledger.setValues[index].append(nested)
      ledger.outstanding[index].append(nested)
      sources[index].value = nested
    }
    if hash % (Self.nestEvery * 2) == 1 {
      let other = 1 - index
      let crossed = StressValue.make(
        stamp: clock.tick(), thread: ledger.index, flags: StressValue.crossSource)
      ledger.setValues[other].append(crossed)
      sources[other].value = crossed
    }
  }

  /// Rebinds one of the source's home labels inside its round, to this source or the other.
  private func rebind(_ value: Int, on index: Int) {
    let hash = StressValue.hash(value) / 3
    guard hash % Self.rebindEvery == 0 else { return }
    let label = index + 2 * ((hash / Self.rebindEvery) % (Self.labelCount / 2))
    let bound = labelBindings[label]
    let destination = (hash / 11) % 2
    switch (hash / 13) % 3 {
    case 0: sources[index].removeObserver(labels[label])
    case 1: bound.binding.unbind()
    default: break  // binding again replaces
    }
    bound.binding = sources[destination].bind(to: labels[label], \.value)
    bound.source = destination
  }

  // MARK: Workers

  func work(_ worker: Int) {
    let ledger = ledgers[worker]
    ThreadLedger.install(ledger)
    defer { ThreadLedger.install(nil) }
    var random = ScriptRandom(seed: seed &+ UInt64(worker) &* 0x1000_0000_0001)
    var held: [Holding] = []
    for step in 0..<operations {
      let source = random.next(2)
      switch random.next(100) {
      case 0..<45: set(source, ledger: ledger)
      case 45..<55: held.append(addToken(source, worker: worker, random: &random))
      case 55..<65: addOwned(source, worker: worker, held: &held, random: &random)
      case 65..<72 where !closuresOwnTokens:
        held.append(addToken(source, worker: worker, random: &random))
      case 65..<69: held.append(addCascade(source, worker: worker, random: &random))
      case 69..<72: held.append(addOwnerOwningToken(source, worker: worker, random: &random))
      case 72..<76: held.append(bindLabel(source, worker: worker))
      case 76..<79: rebindLabel(to: source, held: held, random: &random)
      default:
        if !held.isEmpty { end(held.remove(at: random.next(held.count)), source, &random) }
      }
      while held.count > 12 { end(held.remove(at: random.next(held.count)), source, &random) }
      for index in 0..<2 where !ledger.outstanding[index].isEmpty {
        ledger.violations.append(
          "step \(step): re-entrant sets \(ledger.outstanding[index]) of source \(index) were "
            + "not delivered before the outermost call returned")
        ledger.outstanding[index].removeAll()
      }
    }
    workers[worker].holdings = held
  }

  private func set(_ source: Int, ledger: ThreadLedger) {
    let value = StressValue.make(stamp: clock.tick(), thread: ledger.index)
    ledger.setValues[source].append(value)
    sources[source].value = value
  }

  private static let tokenOptions: [ObservableOptions] = [
    [.new], [.old, .new], [.initial, .new], [.initial, .old, .new], [.old],
  ]

  private func register(_ registration: Registration, worker: Int) -> Registration {
    workers[worker].registrations.append(registration)
    return registration
  }

  private func recorder(_ registration: Registration) -> @Sendable (Int, ObservableOptions) -> Void
  {
    { [clock] value, option in registration.record(value, option, clock: clock) }
  }

  /// Checks, right after a registering call returned, that `.initial` was delivered inside it.
  private func checkInitial(_ registration: Registration) {
    guard registration.options.contains(.initial) else { return }
    // Not `calls`: once the registering call has returned, a delivering thread may append to it.
    registration.initialWasSynchronous = registration.initialValue != nil
  }

  private func addToken(_ source: Int, worker: Int, random: inout ScriptRandom) -> Holding {
    let options = Self.tokenOptions[random.next(Self.tokenOptions.count)]
    let registration = register(
      Registration(name: "token", source: source, options: options), worker: worker)
    let token = sources[source].observe(options: options, recorder(registration))
    checkInitial(registration)
    return .token(HeldToken(token, [registration]))
  }

  /// `addObserver` (replacing or beside the owner's earlier ones) or `observe(with:)`, with a
  /// new owner or one the worker already holds.
  private func addOwned(
    _ source: Int, worker: Int, held: inout [Holding], random: inout ScriptRandom
  ) {
    var owned: OwnedRegistrations
    let reused = held.indices.filter {
      if case .owner(let candidate) = held[$0], candidate.ownedToken == nil { return true }
      return false
    }
    if !reused.isEmpty, random.chance(50),
      case .owner(let existing) = held[reused[random.next(reused.count)]]
    {
      owned = existing
    } else {
      owned = OwnedRegistrations(owner: StressOwner(clock: clock))
      held.append(.owner(owned))
    }
    guard let owner = owned.owner else { return }
    switch random.next(3) {
    case 0, 1:
      let replacing = random.next(2) == 0
      let options = Self.tokenOptions[random.next(Self.tokenOptions.count)]
      let registration = register(
        Registration(
          name: replacing ? "addObserver" : "addObserver(removeIfExists: false)", source: source,
          options: options, owner: owner.record), worker: worker)
      sources[source].addObserver(
        owner, removeIfExists: replacing, options: options, closure: recorder(registration))
      if replacing {
        let now = clock.tick()
        for earlier in owned.registrations where earlier.source == source && earlier.isLive {
          if earlier.name.hasPrefix("addObserver") { earlier.end(at: now, by: "replacement") }
        }
      }
      checkInitial(registration)
      owned.registrations.append(registration)
    default:
      let options: ObservableOptions = random.chance(50) ? [.new] : [.initial, .new]
      let registration = register(
        Registration(name: "observe(with:)", source: source, options: options, owner: owner.record),
        worker: worker)
      // The handler is not told the option: the first call of an `.initial` registration is it.
      sources[source].observe(with: owner, options: options) { [clock] _, value in
        let option: ObservableOptions =
          options.contains(.initial) && registration.calls.isEmpty ? .initial : .new
        registration.record(value, option, clock: clock)
      }
      checkInitial(registration)
      owned.registrations.append(registration)
    }
  }

  /// A token whose closure owns another token of the same source: ending the outer one releases
  /// the inner one inside the engine.
  private func addCascade(_ source: Int, worker: Int, random: inout ScriptRandom) -> Holding {
    let innerOptions = Self.tokenOptions[random.next(Self.tokenOptions.count)]
    let inner = register(
      Registration(name: "token owned by a token", source: source, options: innerOptions),
      worker: worker)
    let outer = register(
      Registration(name: "token owning a token", source: source, options: [.old, .new]),
      worker: worker)
    let innerToken = sources[source].observe(options: innerOptions, recorder(inner))
    checkInitial(inner)
    let record = recorder(outer)
    let outerToken = sources[source].observe(options: [.old, .new]) { value, option in
      withExtendedLifetime(innerToken) { record(value, option) }
    }
    return .token(HeldToken(outerToken, [outer, inner]))
  }

  /// An owner whose registration's closure owns a token of the same source.
  private func addOwnerOwningToken(
    _ source: Int, worker: Int, random: inout ScriptRandom
  ) -> Holding {
    let owned = OwnedRegistrations(owner: StressOwner(clock: clock))
    let inner = register(
      Registration(name: "token owned by an owner's closure", source: source, options: [.new]),
      worker: worker)
    let outer = register(
      Registration(
        name: "owner owning a token", source: source, options: [.old, .new],
        owner: owned.owner?.record), worker: worker)
    let innerToken = sources[source].observe(options: [.new], recorder(inner))
    let record = recorder(outer)
    sources[source].addObserver(owned.owner!, options: [.old, .new]) { value, option in
      withExtendedLifetime(innerToken) { record(value, option) }
    }
    owned.registrations.append(outer)
    owned.ownedToken = inner
    return .owner(owned)
  }

  private func bindLabel(_ source: Int, worker: Int) -> Holding {
    let label = StressLabel()
    let bound = BoundLabel(source: source, binding: sources[source].bind(to: label, \.value))
    return .label(label, bound)
  }

  /// Moves a label the worker holds to `source` (from the worker's thread, not a callback).
  private func rebindLabel(to source: Int, held: [Holding], random: inout ScriptRandom) {
    let labels = held.compactMap { holding -> (StressLabel, BoundLabel)? in
      if case .label(let label, let bound) = holding { return (label, bound) }
      return nil
    }
    guard !labels.isEmpty else { return }
    let (label, bound) = labels[random.next(labels.count)]
    if random.chance(50) { bound.binding.unbind() }
    bound.binding = sources[source].bind(to: label, \.value)
    bound.source = source
  }

  /// Ends a holding: cancel or release a token, remove or drop an owner, unbind or drop a label.
  /// Each registration's end time is taken after the ending call returned (or the last reference
  /// went).
  private func end(_ holding: Holding, _ source: Int, _ random: inout ScriptRandom) {
    switch holding {
    case .token(let held):
      if random.chance(50) {
        held.token?.cancel()
      } else {
        held.token = nil
      }
      let now = clock.tick()
      for registration in held.registrations { registration.end(at: now, by: "token's end") }
      held.token = nil
    case .owner(let owned):
      if random.chance(50), let owner = owned.owner {
        sources[source].removeObserver(owner)
        let now = clock.tick()
        for registration in owned.registrations where registration.source == source {
          registration.end(at: now, by: "removeObserver")
        }
        if let token = owned.ownedToken, token.source == source {
          token.end(at: now, by: "removeObserver")
        }
      }
      // Dropped: the owner dies here, or when a delivering thread lets go of it.
      owned.owner = nil
      let now = clock.tick()
      for registration in owned.registrations {
        registration.end(at: now, by: Registration.ownerDeath)
      }
      // The owner's closure, and the token it owns, go when the engine prunes the owner.
      owned.ownedToken?.end(at: now, timed: false, by: Registration.ownerDeath)
    case .label(_, let bound):
      if random.chance(50) { bound.binding.unbind() }
    }
  }

  /// The labels workers still hold, with the source each is bound to.
  var heldLabels: [(StressLabel, BoundLabel)] {
    workers.flatMap(\.holdings).compactMap { holding in
      if case .label(let label, let bound) = holding { return (label, bound) }
      return nil
    }
  }

  func releaseHoldings() {
    for worker in workers { worker.holdings = [] }
  }

  /// Sets each source once more from the test's thread, with no other thread running.
  func finalSets() {
    let ledger = ledgers[threadCount]
    for source in 0..<2 { set(source, ledger: ledger) }
  }
}

// MARK: - Checks

/// The changes of one source, in delivery order, with the initial value first.
private struct History {
  let values: [Int]
  let position: [Int: Int]

  init(initial: Int, changes: [Int]) {
    values = [initial] + changes
    var position: [Int: Int] = [:]
    for (index, value) in values.enumerated() { position[value] = index }
    self.position = position
  }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private struct Accounting {
  var failures: [String] = []

  mutating func fail(_ message: String) {
    failures.append(message)
  }

  /// Checks a permanent `[.old, .new]` log and returns the history it saw.
  mutating func history(of registration: Registration, initial: Int) -> History {
    var changes: [Int] = []
    var previous = initial
    var expectsOld = true
    for call in registration.calls {
      if expectsOld {
        if call.option != .old || call.value != previous {
          fail(
            "\(registration.name) \(registration.source): got \(call.option)(\(call.value)), "
              + "expected .old(\(previous)) after \(changes.count) changes")
          break
        }
      } else {
        if call.option != .new {
          fail("\(registration.name) \(registration.source): .new missing after .old(\(previous))")
          break
        }
        changes.append(call.value)
        previous = call.value
      }
      expectsOld.toggle()
    }
    return History(initial: initial, changes: changes)
  }

  /// One round a registration took part in: the change's position in the history, and which
  /// halves it received.
  private struct Round {
    let change: Int
    var old = false
    var new = false
    var lastTime: Int
  }

  mutating func check(_ registration: Registration, against history: History) {
    let label =
      "\(registration.name) \(registration.options) on source \(registration.source)"
      + (registration.isLive ? "" : " (ended by \(registration.ending))")
      + (registration.owner.map { " (owner died at \($0.diedAt.load(ordering: .relaxed)))" } ?? "")
    var calls = registration.calls[...]
    var firstChange: Int?
    if registration.options.contains(.initial) {
      guard registration.initialWasSynchronous, let first = calls.first, first.option == .initial
      else {
        fail("\(label): .initial was not delivered inside the registering call")
        return
      }
      guard let position = history.position[first.value] else {
        fail("\(label): .initial delivered \(first.value), a value never set")
        return
      }
      firstChange = position + 1
      calls = calls.dropFirst()
    }
    var rounds: [Round] = []
    for call in calls {
      if call.afterOwnerDeath { fail("\(label): called after its owner's deinit") }
      guard call.option != .initial, let position = history.position[call.value] else {
        fail("\(label): unexpected call \(call.option)(\(call.value))")
        return
      }
      let change = call.option == .old ? position + 1 : position
      guard change > 0, change < history.values.count else {
        fail("\(label): \(call.option)(\(call.value)) belongs to no change")
        return
      }
      if call.option == .new, var last = rounds.last, last.change == change, !last.new {
        last.new = true
        last.lastTime = call.time
        rounds[rounds.count - 1] = last
      } else {
        var round = Round(change: change, lastTime: call.time)
        if call.option == .old { round.old = true } else { round.new = true }
        rounds.append(round)
      }
    }
    if let firstChange, let first = rounds.first, first.change != firstChange {
      fail("\(label): first change #\(first.change), expected #\(firstChange) after .initial")
    }
    for (previous, next) in zip(rounds, rounds.dropFirst()) where next.change != previous.change + 1
    {
      fail(
        "\(label): change #\(previous.change) followed by #\(next.change) "
          + (next.change <= previous.change ? "(duplicate or out of order)" : "(changes lost)"))
      return
    }
    let wantsOld = registration.options.contains(.old)
    let wantsNew = registration.options.contains(.new)
    for (index, round) in rounds.enumerated() where round.old != wantsOld || round.new != wantsNew {
      // Only the last round of an ended registration may be cut short (a death or removal
      // between its `.old` and `.new` halves).
      if index == rounds.count - 1, !registration.isLive { continue }
      fail("\(label): change #\(round.change) delivered as old: \(round.old), new: \(round.new)")
    }
    if registration.isLive {
      if rounds.last?.change != history.values.count - 1 {
        fail("\(label): a live registration missed the last change (it saw \(rounds.count))")
      }
    } else if var endedAt = registration.endedAt, registration.endIsTimed {
      if registration.ending == Registration.ownerDeath, let owner = registration.owner {
        // The owner dies when its last strong reference goes, which may be a delivering thread
        // of the other source in the middle of a call: time the end by the deinit itself.
        endedAt = owner.diedAt.load(ordering: .relaxed)
        if endedAt == 0 { fail("\(label): the dropped owner never died") }
      }
      for round in rounds where StressValue.stamp(history.values[round.change]) > endedAt {
        fail("\(label): called for change #\(round.change), set after it ended at \(endedAt)")
        break
      }
      let late = rounds.filter { $0.lastTime > endedAt }
      if late.count > 1 {
        fail(
          "\(label): called for \(late.count) changes (#\(late[0].change)...) after it ended, "
            + "more than the round in progress")
      }
    }
  }
}

@Suite("Stress: many threads, exact delivery accounting", .serialized)
struct StressTests {
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func eightThreadsOfMixedOperationsDeliverEveryChangeExactlyOnceInOrder() async throws {
    try await runAndAccount(closuresOwnTokens: false)
  }

  /// The same mix plus tokens owned by other registrations' closures (a token's, a dead or
  /// removed owner's), so that ending one registration releases another inside the engine.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func eightThreadsWithClosuresOwningTokensDeliverEveryChangeExactlyOnceInOrder()
    async throws
  {
    try await runAndAccount(closuresOwnTokens: true)
  }

  /// Runs the eight workers and checks every log against the sets that were made.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  private func runAndAccount(closuresOwnTokens: Bool) async throws {
    let seed = environmentSeed
    let run = StressRun(
      seed: seed, operations: environmentOperations, closuresOwnTokens: closuresOwnTokens)
    let context = "seed \(seed), \(run.operations) operations per thread"
    let initialValues = run.sources.map(\.value)

    // Far more than a run needs (see the size note at the top of the file), so only a deadlock
    // trips it; a soak run gets proportionally longer, and so does a run whose waits are scaled
    // up (`TEST_TIMEOUT_SECONDS`, 6 times the default under ThreadSanitizer, where this run
    // takes up to 30 s while the rest of the suite runs beside it).
    let limit =
      60 * max(1, run.operations / defaultOperations)
      * max(1, Int(testTimeout / defaultTestTimeout))
    // Waited for off the pool: the run takes seconds, and the tests that await deliveries need
    // the pool's few threads meanwhile.
    let finished = await offThePool {
      runThreads(threadCount, within: Double(limit)) { run.work($0) }
    }
    try #require(finished, "the workers did not finish within \(limit) s (deadlock?); \(context)")
    // The test's own sets from here on, on whichever thread the test resumed on (no `await`
    // follows, so it stays there).
    ThreadLedger.install(run.ledgers[threadCount])
    defer { ThreadLedger.install(nil) }
    run.finalSets()

    var accounting = Accounting()
    for ledger in run.ledgers {
      for violation in ledger.violations { accounting.fail("thread \(ledger.index): \(violation)") }
    }
    // The library's delivery queue delivers changes that nobody waits for (a set made inside a
    // callback while another thread delivered): those callbacks run outside the run's threads,
    // and the accounting of the permanent observers covers them.
    _ = run.strayCallCount
    for source in 0..<2 {
      let permanent = run.permanent[source]
      let history = accounting.history(of: permanent[0], initial: initialValues[source])
      let owned = accounting.history(of: permanent[1], initial: initialValues[source])
      let disagreement = zip(owned.values, history.values).enumerated().first { $1.0 != $1.1 }
      let seen = "\(owned.values.count - 1) and \(history.values.count - 1) changes"
      #expect(
        disagreement == nil && owned.values.count == history.values.count,
        "the permanent owner and token disagree from #\(disagreement?.offset ?? -1), saw \(seen); \(context)"
      )
      let changes = Array(history.values.dropFirst())
      let expected = run.ledgers.flatMap { $0.setValues[source] }
      #expect(
        Set(changes).count == changes.count,
        "a change was delivered twice; source \(source), \(context)")
      #expect(
        changes.sorted() == expected.sorted(),
        "delivered \(changes.count) of \(expected.count) changes; source \(source), \(context)")
      #expect(changes.last == run.sources[source].value, "source \(source), \(context)")
      for ledger in run.ledgers {
        let positions = ledger.setValues[source].compactMap { history.position[$0] }
        #expect(
          zip(positions, positions.dropFirst()).allSatisfy(<),
          "thread \(ledger.index)'s sets of source \(source) arrived out of order; \(context)")
      }
      for registration in run.workers.flatMap(\.registrations) where registration.source == source {
        accounting.check(registration, against: history)
      }
    }
    let report = accounting.failures.prefix(12).joined(separator: "\n")
    #expect(
      accounting.failures.isEmpty,
      "\(accounting.failures.count) failures; \(context):\n\(report)")

    // Bindings end on their source's last value, and one registration per bound label.
    for (index, label) in run.labels.enumerated() {
      let source = run.labelBindings[index].source
      #expect(label.value == run.sources[source].value, "label \(index); \(context)")
    }
    do {
      let heldLabels = run.heldLabels
      for (label, bound) in heldLabels {
        #expect(label.value == run.sources[bound.source].value, "a held label; \(context)")
      }
      for source in 0..<2 {
        let labels =
          run.labelBindings.filter { $0.source == source }.count
          + heldLabels.filter { $0.1.source == source }.count
        let live = run.workers.flatMap(\.registrations).filter { $0.isLive && $0.source == source }
          .count
        #expect(
          run.sources[source].observerCount == StressRun.permanentPerSource + labels + live,
          "registrations of source \(source) (labels \(labels), live \(live)); \(context)")
      }
    }

    // Once the workers' holdings are gone (and a set has pruned dead owners), only the
    // permanent observers and the long-lived labels remain.
    run.releaseHoldings()
    run.finalSets()
    for source in 0..<2 {
      let labels = run.labelBindings.filter { $0.source == source }.count
      #expect(
        run.sources[source].observerCount == StressRun.permanentPerSource + labels,
        "registrations of source \(source) after releasing everything; \(context)")
    }
  }
}

// MARK: - Library defects found by the stress run

private func waitOrFail(_ semaphore: DispatchSemaphore, _ what: Comment) -> Bool {
  let result = semaphore.wait(timeout: .now() + 10)
  #expect(result == .success, what)
  return result == .success
}

private final class FindingsOwner: Sendable {}

/// A value handed between threads that semaphores order.
private final class Handoff<Value>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}

@Suite("Stress: smallest programs for what the stress run found")
struct StressFindingsTests {
  /// Found by `eightThreadsWithClosuresOwningTokens…` (it hangs within a few hundred operations).
  ///
  /// The pending queue pops by advancing its head and keeps the taken slots until it reclaims
  /// them (when it empties, or when they are the larger part). A taken `.add` slot still holds
  /// the registration's closure. If the registration is removed meanwhile (here: from another
  /// thread, applied before the next round), the removal's copy is released after unlocking,
  /// but the slot's copy is then the last one, and it is destroyed when the queue reclaims its
  /// slots, under the observable's lock. A closure that owns a token of the same observable
  /// then re-enters the lock from the token's deinit: the delivering thread deadlocks.
  @Test
  func aClosureKeptByATakenSlotOfThePendingQueueIsReleasedOutsideTheLock() async {
    await onItsOwnThread {
      let source = Observable(0)
      let inRound = DispatchSemaphore(value: 0)
      let proceed = DispatchSemaphore(value: 0)
      let blocker = source.observe { value, _ in
        guard value <= 2 else { return }
        inRound.signal()
        _ = proceed.wait(timeout: .now() + 10)
      }
      let delivered = DispatchSemaphore(value: 0)
      DispatchQueue(label: "setter").async {
        source.value = 1
        delivered.signal()
      }
      guard waitOrFail(inRound, "round 1 started") else { return }
      var outer: ObservationToken?
      do {
        // Registered during another thread's round: both wait in the pending queue.
        let inner = source.observe { _, _ in }
        outer = source.observe { _, _ in withExtendedLifetime(inner) {} }
      }
      for value in 2...4 { source.value = value }  // queued behind the registrations
      proceed.signal()
      guard waitOrFail(inRound, "round 2 started") else { return }
      // Removed before round 3; the queue's slot for its `.add` still holds its closure, and
      // popping change 4 empties the queue and destroys that slot under the lock.
      outer = nil
      proceed.signal()
      #expect(
        delivered.wait(timeout: .now() + 10) == .success,
        "the delivering thread deadlocked releasing a closure that owns a token")
      withExtendedLifetime((blocker, outer)) {}
    }
  }

  /// Found by `eightThreadsWithClosuresOwningTokens…` (the other way it hangs).
  ///
  /// A round marks the entry of an owner it finds dead and keeps its closure until the list is
  /// compacted after the round. A removal from another thread, applied at the round boundary,
  /// takes its own closure out and then compacts the list when marked entries are half of it,
  /// dropping the closures the marked entries still hold, under the observable's lock. A dead
  /// owner's closure that owns a token of the same observable then deadlocks the deliverer.
  @Test
  func aDeadOwnersClosureIsReleasedOutsideTheLockWhenARemovalCompactsTheList() async {
    await onItsOwnThread {
      let source = Observable(0)
      let inRound = DispatchSemaphore(value: 0)
      let proceed = DispatchSemaphore(value: 0)
      let blocker = source.observe { value, _ in
        guard value == 1 else { return }
        inRound.signal()
        _ = proceed.wait(timeout: .now() + 10)
      }
      var owner: FindingsOwner? = FindingsOwner()
      do {
        let inner = source.observe { _, _ in }
        source.addObserver(owner!) { _, _ in withExtendedLifetime(inner) {} }
      }
      let cancelled = source.observe { _, _ in }
      let delivered = DispatchSemaphore(value: 0)
      DispatchQueue(label: "setter").async {
        source.value = 1
        delivered.signal()
      }
      guard waitOrFail(inRound, "round 1 started") else { return }
      owner = nil  // round 1 marks the entry when it reaches it; the closure stays until compaction
      cancelled.cancel()  // applied at the boundary: 2 of the 4 entries are then marked
      proceed.signal()
      #expect(
        delivered.wait(timeout: .now() + 10) == .success,
        "the delivering thread deadlocked releasing a dead owner's closure that owns a token")
      withExtendedLifetime((blocker, owner)) {}
    }
  }

  /// A registration with `.initial` that could not wait for the turn (its wait would have
  /// deadlocked) runs `.initial` at once and joins the list only after it: a removal made
  /// meanwhile must end it, although it is neither in the list nor queued yet.
  @Test
  func aRegistrationRemovedBeforeItJoinsTheListIsNeverCalled() async {
    await onItsOwnThread {
      let source = Observable(0)
      let round = Gate("round 1")
      let blocker = source.observe { value, _ in if value == 1 { round.block() } }
      let owner = FindingsOwner()
      let calls = RecordingLog<String>()
      round.runOnAnotherThread {
        source.value = 1
      } whileBlocked: {
        // Round 1 waits for this block to end: the registration gives up waiting for the turn.
        source.addObserver(owner, options: [.initial, .new]) { value, option in
          calls.append("\(option == .initial ? "initial" : "new") \(value)")
          if option == .initial { source.removeObserver(owner) }
        }
      }
      source.value = 2
      #expect(calls.events == ["initial 1"])
      #expect(source.observerCount == 1, "only the blocker is registered")
      withExtendedLifetime((blocker, owner)) {}
    }
  }
}
