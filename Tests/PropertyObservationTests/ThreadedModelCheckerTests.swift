import PropertyObservation
import Testing

// The checker of the thread-level model test, on hand-written logs: a log that keeps the contract
// passes, and each kind of break it is there to find is reported. Without these, a checker that
// accepted everything would pass every run of the model test.

/// A log of two rounds (0 → 1 → 2, set by thread 0 and delivered on thread 7) to the anchor #0
/// `[.old, .new]` and to #1 `[.new]`, both registered first.
private func validLog() -> [ModelEvent] {
  [
    .registering(registration: 0, valueBefore: 0), .registered(registration: 0, valueAfter: 0),
    .registering(registration: 1, valueBefore: 0), .registered(registration: 1, valueAfter: 0),
    .call(registration: 0, option: .old, value: 0, thread: 7),
    .call(registration: 0, option: .new, value: 1, thread: 7),
    .call(registration: 1, option: .new, value: 1, thread: 7),
    .setReturned(value: 1, thread: 0, quick: true),
    .call(registration: 0, option: .old, value: 1, thread: 7),
    .call(registration: 0, option: .new, value: 2, thread: 7),
    .call(registration: 1, option: .new, value: 2, thread: 7),
    .setReturned(value: 2, thread: 0, quick: true),
  ]
}

private let twoRegistrations = [
  ModelRegistration(options: [.old, .new], owner: nil),
  ModelRegistration(options: [.new], owner: nil),
]

private func problems(
  _ events: [ModelEvent], _ registrations: [ModelRegistration] = twoRegistrations,
  finalValue: Int = 2
) -> [String] {
  ThreadedModelChecker.problems(
    events: events, registrations: registrations, anchor: 0, finalValue: finalValue)
}

@Suite("The thread-level model's checker")
struct ThreadedModelCheckerTests {
  @Test func aLogThatKeepsTheContractPasses() {
    #expect(problems(validLog()) == [])
  }

  @Test func aMissedRoundIsReported() {
    var events = validLog()
    events.remove(at: 6)  // #1's .new(1)
    #expect(problems(events).contains { $0.hasPrefix("registration #1") })
  }

  @Test func aDuplicateOrWrongOldIsReported() {
    var events = validLog()
    events.insert(.call(registration: 1, option: .new, value: 1, thread: 7), at: 7)
    #expect(problems(events).contains { $0.contains("a gap, a duplicate or a wrong old/new") })
  }

  @Test func aStorageOrderThatDoesNotChainIsReported() {
    var events = validLog()
    events[8] = .call(registration: 0, option: .old, value: 0, thread: 7)
    #expect(problems(events).contains { $0.hasPrefix("storage order") })
  }

  @Test func interleavedRoundsAreReported() {
    let registrations = [
      ModelRegistration(options: [.old, .new], owner: nil),
      ModelRegistration(options: [.old, .new], owner: nil),
    ]
    var events = validLog()
    events.insert(.call(registration: 1, option: .old, value: 1, thread: 7), at: 9)
    events.insert(.call(registration: 1, option: .old, value: 0, thread: 7), at: 5)
    #expect(problems(events, registrations) == [])
    // #1's .new(1) after round 2 has started, although #1 was called in step in round 1.
    let late = events.remove(at: 7)
    events.insert(late, at: 9)
    #expect(problems(events, registrations).contains { $0.contains("rounds interleave") })
  }

  @Test func aNewBeforeTheOldPassEndedIsReported() {
    var events = validLog()
    events.swapAt(5, 6)  // #1's .new(1) before the anchor's
    #expect(problems(events).contains { $0.contains("before the .old pass ended") })
  }

  @Test func aSetThatReturnsBeforeItsRoundReachedEveryoneIsReported() {
    var events = validLog()
    events.swapAt(10, 11)  // thread 0's set of 2 returns before #1 got it
    #expect(problems(events).contains { $0.contains("returned at log position 10 before") })
  }

  @Test func aCallAfterRemovingItselfInOldIsReported() {
    let registrations = twoRegistrations + [ModelRegistration(options: [.old, .new], owner: nil)]
    var events = validLog()
    events.insert(
      contentsOf: [
        .registering(registration: 2, valueBefore: 0), .registered(registration: 2, valueAfter: 0),
      ], at: 4)
    // Round 1: #2's .old, then it removes itself, then its .new anyway.
    events.insert(
      contentsOf: [
        .call(registration: 2, option: .old, value: 0, thread: 7),
        .removedItself(registration: 2),
      ], at: 7)
    events.insert(.call(registration: 2, option: .new, value: 1, thread: 7), at: 11)
    #expect(
      problems(events, registrations).contains { $0.contains("after it removed itself") })
  }

  @Test func aCallAfterTheOwnerDiedIsReported() {
    let registrations = [
      ModelRegistration(options: [.old, .new], owner: nil),
      ModelRegistration(options: [.new], owner: 5),
    ]
    var events = validLog()
    events.insert(.ownerDied(owner: 5), at: 8)  // before round 2, in which #1 is still called
    #expect(problems(events, registrations).contains { $0.contains("its owner died") })
  }

  @Test func aRoundMissedOnceTheOwnerWasLetGoIsNotAProblem() {
    // The owner may already be dead (its reference count at zero) while its `deinit`, which
    // logs the death, is preempted: a round delivered then is not due to it.
    let registrations = [
      ModelRegistration(options: [.old, .new], owner: nil),
      ModelRegistration(options: [.new], owner: 5),
    ]
    var events = validLog()
    events.remove(at: 10)  // #1's .new(2)
    events.insert(.ownerReleased(owner: 5), at: 8)  // before round 2
    events.append(.ownerDied(owner: 5))
    #expect(problems(events, registrations) == [])
  }

  @Test func aRoundMissedBeforeTheOwnerWasLetGoIsReported() {
    let registrations = [
      ModelRegistration(options: [.old, .new], owner: nil),
      ModelRegistration(options: [.new], owner: 5),
    ]
    var events = validLog()
    events.remove(at: 10)  // #1's .new(2)
    events.append(.ownerReleased(owner: 5))
    events.append(.ownerDied(owner: 5))
    #expect(problems(events, registrations).contains { $0.contains("registration #1") })
  }

  @Test func aCatchUpAfterALaterRoundStartedIsReported() {
    let registrations =
      twoRegistrations + [ModelRegistration(options: [.initial, .new], owner: nil)]
    var events = validLog()
    // #2 registers with .initial before round 1 and is in the list before round 1 starts, but
    // gets round 1 only after round 2 started.
    events.insert(
      contentsOf: [
        .registering(registration: 2, valueBefore: 0),
        .call(registration: 2, option: .initial, value: 0, thread: 9),
        .registered(registration: 2, valueAfter: 0),
      ], at: 4)
    events.insert(
      contentsOf: [
        .call(registration: 2, option: .new, value: 1, thread: 7),
        .call(registration: 2, option: .new, value: 2, thread: 7),
      ], at: 13)
    #expect(problems(events, registrations).contains { $0.contains("was caught up") })
  }

  /// As in `aCatchUpAfterALaterRoundStartedIsReported`, while #3 is inside its `.initial`:
  /// registered after #2, it must not hold #2 back; registered before it, #2 queues behind it.
  private func lateCatchUp(whileInitialOf laterRegistration: Bool) -> [String] {
    let registrations =
      twoRegistrations + [
        ModelRegistration(options: [.initial, .new], owner: nil),
        ModelRegistration(options: [.initial], owner: nil),
      ]
    var events = validLog()
    let second: [ModelEvent] = [
      .registering(registration: 2, valueBefore: 0),
      .call(registration: 2, option: .initial, value: 0, thread: 9),
      .registered(registration: 2, valueAfter: 0),
    ]
    let third: [ModelEvent] = [
      .registering(registration: 3, valueBefore: 0),
      .call(registration: 3, option: .initial, value: 0, thread: 8),
    ]
    events.insert(
      contentsOf: laterRegistration ? second + third : third + second, at: 4)
    events.insert(
      contentsOf: [
        .call(registration: 2, option: .new, value: 1, thread: 7),
        .call(registration: 2, option: .new, value: 2, thread: 7),
        .registered(registration: 3, valueAfter: 2),
      ], at: 16)
    return problems(events, registrations)
  }

  @Test func aLateCatchUpWhileALaterRegistrationsInitialRanIsReported() {
    #expect(lateCatchUp(whileInitialOf: true).contains { $0.contains("was caught up") })
  }

  @Test func aLateCatchUpBehindAnEarlierRegistrationsInitialIsNot() {
    #expect(lateCatchUp(whileInitialOf: false) == [])
  }

  @Test func registrationOrderWithinARoundIsChecked() {
    let registrations = twoRegistrations + [ModelRegistration(options: [.new], owner: nil)]
    var events = validLog()
    events.insert(
      contentsOf: [
        .registering(registration: 2, valueBefore: 0), .registered(registration: 2, valueAfter: 0),
      ], at: 4)
    // Then round 2's .new pass calls #2 before #1, which registered first.
    events.insert(.call(registration: 2, option: .new, value: 1, thread: 7), at: 9)
    events.insert(.call(registration: 2, option: .new, value: 2, thread: 7), at: 14)
    #expect(problems(events, registrations) == [])
    events.swapAt(13, 14)
    #expect(problems(events, registrations).contains { $0.contains("which registered later") })
  }
}
