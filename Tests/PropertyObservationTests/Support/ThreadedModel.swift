import Dispatch
import Foundation
import PropertyObservation
import TestSupport

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// The recording side of the thread-level model test: one observable driven from several threads,
// and one locked log of everything that happened to it, in the order the log's lock saw it. A
// callback appends its call before it does anything else, and a thread appends the start of an
// operation before making it and its end after it returned, so the log's order is consistent
// with the real order of the calls. `ThreadedModelChecker` replays the log against the contract.

/// Something that happened during a threaded run.
enum ModelEvent: Sendable {
  /// A callback of `registration`, on the thread `thread` (compare for equality only).
  case call(registration: Int, option: ObservableOptionsName, value: Int, thread: UInt)
  /// A thread is about to register `registration`; the value it read just before.
  case registering(registration: Int, valueBefore: Int)
  /// The registering call returned; the value read just after.
  case registered(registration: Int, valueAfter: Int)
  /// A thread is about to end these registrations (cancel, `removeObserver`, a replacement).
  case ending([Int])
  /// The call that ended them returned.
  case ended([Int])
  /// Inside its own `.old`, `registration` is about to remove itself.
  case removedItself(registration: Int)
  /// A thread is about to let go of its reference to an owner, maybe the last one: from here its
  /// registrations may stop being called at any moment, before `.ownerDied` is logged (the
  /// owner's `deinit` runs on whichever thread releases it last, and may be preempted there).
  case ownerReleased(owner: Int)
  /// An owner's `deinit` ran.
  case ownerDied(owner: Int)
  /// A top-level set of `value` by model thread `thread` returned; `quick` if it took less than
  /// the turn timeout after which a waiting setter may give up its turn (see `mayQueue(_:)`).
  case setReturned(value: Int, thread: Int, quick: Bool)
}

/// What the checker needs to know about a registration besides its events.
struct ModelRegistration: Sendable {
  let options: ObservableOptions
  /// The owner's id, for owner-based registrations.
  let owner: Int?
}

/// The run's ordered log, written from every thread.
final class ModelLog: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var storage: [ModelEvent] = []
  private var registrations: [ModelRegistration] = []
  private var owners = 0
  private var nested = 0

  func append(_ event: ModelEvent) {
    lock.lock()
    storage.append(event)
    lock.unlock()
  }

  /// A new registration id.
  func newRegistration(options: ObservableOptions, owner: Int?) -> Int {
    lock.lock()
    defer { lock.unlock() }
    registrations.append(ModelRegistration(options: options, owner: owner))
    return registrations.count - 1
  }

  /// A new owner id.
  func newOwner() -> Int {
    lock.lock()
    defer { lock.unlock() }
    owners += 1
    return owners
  }

  /// A value no other set stores: nested sets store negative values, top-level sets positive ones.
  func newNestedValue() -> Int {
    lock.lock()
    defer { lock.unlock() }
    nested += 1
    return -nested
  }

  var snapshot: (events: [ModelEvent], registrations: [ModelRegistration]) {
    lock.lock()
    defer { lock.unlock() }
    return (storage, registrations)
  }
}

/// An owner whose death the log records.
final class ModelOwner: Sendable {
  let id: Int
  private let log: ModelLog

  init(log: ModelLog) {
    self.log = log
    id = log.newOwner()
  }

  deinit { log.append(.ownerDied(owner: id)) }

  /// Logs that the caller is about to let go of its reference (see `ModelEvent.ownerReleased`).
  func willRelease() {
    log.append(.ownerReleased(owner: id))
  }
}

/// A registration's own token, for a callback that cancels itself; filled once the registering
/// call has returned.
final class TokenBox: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var token: ObservationToken?

  func store(_ token: ObservationToken) {
    lock.lock()
    self.token = token
    lock.unlock()
  }

  /// The token, once; the caller cancels and releases it outside this lock.
  func take() -> ObservationToken? {
    lock.lock()
    defer { lock.unlock() }
    let taken = token
    token = nil
    return taken
  }
}

/// The tokens any thread may cancel, and the boxes to empty at the end of a run.
final class TokenPool: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var tokens: [(registration: Int, token: ObservationToken)] = []
  private var boxes: [TokenBox] = []

  func insert(_ token: ObservationToken, for registration: Int) {
    lock.lock()
    tokens.append((registration, token))
    lock.unlock()
  }

  func keep(_ box: TokenBox) {
    lock.lock()
    boxes.append(box)
    lock.unlock()
  }

  /// Takes the token at `pick` modulo the pool's size out of the pool, if there is one.
  func take(_ pick: Int) -> (registration: Int, token: ObservationToken)? {
    lock.lock()
    defer { lock.unlock() }
    guard !tokens.isEmpty else { return nil }
    let index = pick % tokens.count
    tokens.swapAt(index, tokens.count - 1)
    return tokens.removeLast()
  }

  /// Empties the pool and the boxes; the caller cancels what it gets outside this lock.
  func takeAll() -> [ObservationToken] {
    lock.lock()
    let taken = tokens.map(\.token)
    let boxes = self.boxes
    tokens = []
    self.boxes = []
    lock.unlock()
    return taken + boxes.compactMap { $0.take() }
  }
}

/// What a registration's callback does besides logging.
enum ModelReaction: Sendable, Equatable {
  case none
  /// On `.new` of a top-level value divisible by 3, sets a nested value.
  case nestedSet
  /// On `.new` of a top-level value divisible by 5, registers a token (options chosen by value).
  case registerToken
  /// On its first `.old` after its token was stored, cancels its own token.
  case cancelItselfInOld
  /// On `.old`, removes its owner (an owner with this registration only).
  case removeOwnerInOld
}

/// The identity of the calling thread, comparable for equality while the thread lives.
func currentThreadID() -> UInt {
  #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
  #else
    UInt(pthread_self())
  #endif
}

/// One observable of `Int` driven from several threads, every operation recorded in `log`.
final class ThreadedModel: Sendable {
  let observable = Observable(0)
  let log = ModelLog()
  let pool = TokenPool()

  /// Sets a top-level `value` from model thread `thread` and records when the set returned.
  func set(_ value: Int, thread: Int) {
    let mayHaveBeenQueued = mayQueue { observable.value = value }
    log.append(.setReturned(value: value, thread: thread, quick: !mayHaveBeenQueued))
  }

  /// Registers the anchor, `[.old, .new]`, whose token the caller keeps to the end.
  func addAnchor() -> (registration: Int, token: ObservationToken) {
    let registration = log.newRegistration(options: [.old, .new], owner: nil)
    return (registration, register(registration, options: [.old, .new], box: nil))
  }

  /// Registers a token kept in the pool (or, for `.cancelItselfInOld`, by its own callback).
  @discardableResult
  func addToken(options: ObservableOptions, reaction: ModelReaction, slowInitial: Bool) -> Int {
    let registration = log.newRegistration(options: options, owner: nil)
    let box = reaction == .cancelItselfInOld ? TokenBox() : nil
    let token = register(
      registration, options: options, reaction: reaction, slowInitial: slowInitial, box: box)
    if let box {
      box.store(token)
      pool.keep(box)
    } else {
      pool.insert(token, for: registration)
    }
    return registration
  }

  /// Registers with `options` and cancels at once, from the calling thread (registration churn).
  func registerAndCancel(options: ObservableOptions) {
    let registration = log.newRegistration(options: options, owner: nil)
    let token = register(registration, options: options, box: nil)
    log.append(.ending([registration]))
    token.cancel()
    log.append(.ended([registration]))
  }

  private func register(
    _ registration: Int, options: ObservableOptions, reaction: ModelReaction = .none,
    slowInitial: Bool = false, box: TokenBox?
  ) -> ObservationToken {
    let callback = makeCallback(
      registration, reaction: reaction, slowInitial: slowInitial, box: box, owner: nil)
    log.append(.registering(registration: registration, valueBefore: observable.value))
    let token = observable.observe(options: options, callback)
    log.append(.registered(registration: registration, valueAfter: observable.value))
    return token
  }

  /// Registers with `addObserver` for `owner`; `replaced` are the registrations that
  /// `removeIfExists: true` ends.
  func addObserver(
    _ owner: ModelOwner, replacing: Bool, replaced: [Int], options: ObservableOptions,
    reaction: ModelReaction, slowInitial: Bool
  ) -> Int {
    let registration = log.newRegistration(options: options, owner: owner.id)
    let callback = makeCallback(
      registration, reaction: reaction, slowInitial: slowInitial, box: nil,
      owner: reaction == .removeOwnerInOld ? owner : nil)
    if !replaced.isEmpty { log.append(.ending(replaced)) }
    log.append(.registering(registration: registration, valueBefore: observable.value))
    observable.addObserver(owner, removeIfExists: replacing, options: options, closure: callback)
    log.append(.registered(registration: registration, valueAfter: observable.value))
    if !replaced.isEmpty { log.append(.ended(replaced)) }
    return registration
  }

  /// Cancels the pooled token at `pick`, if any, from the calling thread.
  func cancelPooled(_ pick: Int) {
    guard let (registration, token) = pool.take(pick) else { return }
    log.append(.ending([registration]))
    token.cancel()
    log.append(.ended([registration]))
  }

  /// Removes `owner`'s registrations `registrations` with `removeObserver`.
  func remove(_ owner: ModelOwner, registrations: [Int]) {
    log.append(.ending(registrations))
    observable.removeObserver(owner)
    log.append(.ended(registrations))
  }

  private func makeCallback(
    _ registration: Int, reaction: ModelReaction, slowInitial: Bool, box: TokenBox?,
    owner: ModelOwner?
  ) -> @Sendable (Int, ObservableOptions) -> Void {
    let log = self.log
    return { [weak self, weak owner] value, option in
      log.append(
        .call(
          registration: registration, option: .init(option), value: value,
          thread: currentThreadID()))
      guard let self else { return }
      switch option {
      case .initial:
        // Holds the registration's gate open longer while other threads deliver.
        if slowInitial { usleep(200) }
      case .old:
        switch reaction {
        case .cancelItselfInOld:
          if let token = box?.take() {
            log.append(.removedItself(registration: registration))
            token.cancel()
          }
        case .removeOwnerInOld:
          if let owner {
            log.append(.removedItself(registration: registration))
            observable.removeObserver(owner)
          }
        default: break
        }
      default:
        // Nested values are negative: their rounds cause nothing, so reactions cannot loop.
        guard value > 0 else { return }
        if reaction == .nestedSet && value % 3 == 0 {
          observable.value = log.newNestedValue()
        } else if reaction == .registerToken && value % 5 == 0 {
          let choices: [ObservableOptions] = [
            [.new], [.old, .new], [.initial, .new], [.initial, .old],
          ]
          addToken(options: choices[value % choices.count], reaction: .none, slowInitial: false)
        }
      }
    }
  }
}
