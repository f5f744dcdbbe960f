import PropertyObservation

/// Replays a threaded run's log against the contract (Threading.md, OrderingContract.md).
///
/// Every set stores a value no other set stores, so the storage order is recovered from the
/// `anchor`, a registration with `[.old, .new]` made before any other and never removed: its
/// rounds must chain (each `.old` is the previous `.new`, from the initial 0), hold each top-level
/// set exactly once, in each thread's program order, and end on the final value. Round `k` is the
/// `k`-th change stored. From there, the reference model says which calls each registration must
/// get: one per option it asked for, for every round from its registration point (its `.initial`
/// value, or the values read around its registering call) to its end, in order, with the round's
/// old and new values. The log's order then pins what threads may not blur:
///
/// - a registration's calls are a prefix of that sequence; it is complete unless the registration
///   ended, and an ending from another thread lets at most one more round through; an ending
///   inside its own `.old` or its owner's death lets nothing more through;
/// - rounds never interleave: a call of a round older than the newest round started, or an `.old`
///   after the round's `.new` pass started, is a catch-up call; a registration's catch-up calls
///   come before all its other calls, all while one round is the newest, and a registration is
///   caught up before the second round after its registering call returned starts (a call on
///   another thread than the one that delivered the round to the anchor is a catch-up call too);
/// - within a round, the `.old` pass precedes the `.new` pass, and the calls of each pass, like
///   those of each round of a catch-up, keep registration order (for registrations whose
///   registering calls did not overlap);
/// - a top-level set returns only after its round reached every registration that was due it
///   (unless it took 100 ms or more, after which a waiting setter may leave its change to the
///   deliverer).
///
/// Each problem names the registration, the round and the log position of the first divergent
/// point found (at most 12 problems are kept).
struct ThreadedModelChecker {
  private struct Call {
    let position: Int
    let option: ObservableOptionsName
    let value: Int
    let round: Int
    /// The newest round started before this call.
    let frontier: Int
    let thread: UInt
  }

  /// A call placed in a round's pass or catch-up, for the order checks.
  private struct Placed {
    let position: Int
    let registration: Int
    let option: ObservableOptionsName
    let round: Int
  }

  private struct Record {
    var calls: [Call] = []
    var initial: Call?
    var extraInitials = 0
    var registering: (position: Int, value: Int)?
    var registered: (position: Int, value: Int)?
    /// The first ending: where it started, where its call returned, and whether nothing at all
    /// may follow it (a removal inside its own callback, or its owner's death).
    var ending: (start: Int, end: Int?, strict: Bool)?
    /// Where a thread first let go of a reference to its owner: from there the owner may be dead
    /// before its death is logged, so no call is due any more.
    var ownerReleased: Int?

    /// Where calls stop being due: the ending's start, or the owner's release if earlier.
    var lastDuePosition: Int? {
      switch (ending?.start, ownerReleased) {
      case (let start?, let released?): min(start, released)
      case (let start?, nil): start
      case (nil, let released?): released
      case (nil, nil): nil
      }
    }
  }

  private let events: [ModelEvent]
  private let registrations: [ModelRegistration]
  private let anchor: Int
  private let finalValue: Int
  private var problems: [String] = []
  private let limit = 12

  /// Round `k`'s old and new values; index 0 is the initial state.
  private var rounds: [(old: Int, new: Int)] = [(0, 0)]
  /// The round that stored each value (0 for the initial value).
  private var roundOf: [Int: Int] = [0: 0]
  /// The anchor's `.old` and `.new` positions per round: where each round and its `.new` pass start.
  private var roundStart: [Int] = [-1]
  private var newPassStart: [Int] = [-1]
  /// The thread that delivered each round to the anchor.
  private var roundThread: [UInt] = [0]
  /// Per round, where the first catch-up made while it was the newest round started began.
  private var catchUpStart: [Int] = []
  /// Per round, the catch-up calls made while it was the newest round started.
  private var catchUps: [[Placed]] = []
  private var records: [Record] = []
  /// The newest round started before each position.
  private var frontierBefore: [Int] = []

  /// Checks `events`; `anchor` is the first registration, `[.old, .new]`, never ended.
  ///
  /// - Returns: The problems. A registration not called in time (a round missing, caught up
  ///   late, or a set that returned before it got its round) while a registration made before it
  ///   was still inside its `.initial` is not one: it queues behind that gate, in order, and is
  ///   caught up once the gate opens. Held back by a registration made after it, it is one
  ///   (`aGatedRegistrationIsNotHeldBackByALaterRegistrationsInitial` pins the smallest case).
  static func problems(
    events: [ModelEvent], registrations: [ModelRegistration], anchor: Int, finalValue: Int
  ) -> [String] {
    var checker = ThreadedModelChecker(
      events: events, registrations: registrations, anchor: anchor, finalValue: finalValue)
    checker.run()
    return checker.problems
  }

  private init(
    events: [ModelEvent], registrations: [ModelRegistration], anchor: Int, finalValue: Int
  ) {
    self.events = events
    self.registrations = registrations
    self.anchor = anchor
    self.finalValue = finalValue
  }

  private mutating func fail(
    _ problem: String, whileAnotherInitialRan span: (registration: Int, from: Int, to: Int)? = nil
  ) {
    if let span, anEarlierInitialRan(span) { return }
    if problems.count < limit { problems.append(problem) }
  }

  /// Whether a registration made before `span.registration` was inside its registering call with
  /// `.initial` at some point between the two log positions.
  private func anEarlierInitialRan(_ span: (registration: Int, from: Int, to: Int)) -> Bool {
    let own = records[span.registration].registering?.position ?? .max
    return records.indices.contains { other in
      guard other != span.registration, registrations[other].options.contains(.initial),
        let registering = records[other].registering?.position, registering < own
      else { return false }
      return registering <= span.to && (records[other].registered?.position ?? .max) >= span.from
    }
  }

  private mutating func run() {
    recoverStorageOrder()
    guard problems.isEmpty else { return }
    collect()
    guard problems.isEmpty else { return }
    var inStep: [[Placed]] =
      Array(repeating: [], count: rounds.count)
    catchUps = Array(repeating: [], count: rounds.count)
    catchUpStart = Array(repeating: .max, count: rounds.count)
    for record in records {
      for call in record.calls where isCatchUp(call) {
        catchUpStart[call.frontier] = min(catchUpStart[call.frontier], call.position)
      }
    }
    for registration in records.indices {
      checkRegistration(registration, inStep: &inStep)
    }
    checkRounds(inStep)
    checkSetsReturnDelivered()
  }

  // MARK: - Storage order

  private mutating func recoverStorageOrder() {
    var pendingOld: Int?
    for (position, event) in events.enumerated() {
      guard case .call(let registration, let option, let value, let thread) = event,
        registration == anchor
      else { continue }
      switch option {
      case .old:
        guard pendingOld == nil, value == rounds[rounds.count - 1].new else {
          fail(
            "storage order: the anchor's .old(\(value)) at log position \(position) does not follow "
              + "its .new(\(rounds[rounds.count - 1].new)) of round \(rounds.count - 1)")
          return
        }
        pendingOld = value
        roundStart.append(position)
        roundThread.append(thread)
      case .new:
        guard let old = pendingOld else {
          fail("storage order: the anchor's .new(\(value)) at log position \(position) has no .old")
          return
        }
        guard roundOf[value] == nil else {
          fail("storage order: \(value) was delivered as new twice (log position \(position))")
          return
        }
        roundOf[value] = rounds.count
        rounds.append((old, value))
        newPassStart.append(position)
        pendingOld = nil
      case .initial:
        fail("storage order: the anchor got .initial")
        return
      }
    }
    if pendingOld != nil { fail("storage order: the anchor's last round has no .new") }
    if rounds[rounds.count - 1].new != finalValue {
      fail(
        "storage order: the anchor's last value \(rounds[rounds.count - 1].new) is not the final \(finalValue)"
      )
    }
    var lastRound: [Int: (round: Int, value: Int)] = [:]
    for event in events {
      guard case .setReturned(let value, let thread, _) = event else { continue }
      guard let round = roundOf[value] else {
        fail("storage order: thread \(thread)'s set of \(value) never reached the anchor")
        continue
      }
      if let previous = lastRound[thread], previous.round >= round {
        fail(
          "storage order: thread \(thread) set \(previous.value) before \(value), but they were "
            + "stored as rounds \(previous.round) and \(round)")
      }
      lastRound[thread] = (round, value)
    }
  }

  // MARK: - Per registration

  private mutating func collect() {
    records = Array(repeating: Record(), count: registrations.count)
    frontierBefore.reserveCapacity(events.count)
    var frontier = 0
    for (position, event) in events.enumerated() {
      frontierBefore.append(frontier)
      switch event {
      case .call(let registration, let option, let value, let thread):
        if option == .initial {
          let call = Call(
            position: position, option: option, value: value, round: 0, frontier: frontier,
            thread: thread)
          if records[registration].initial == nil && records[registration].calls.isEmpty {
            records[registration].initial = call
          } else {
            records[registration].extraInitials += 1
          }
          continue
        }
        guard let stored = roundOf[value] else {
          fail("registration #\(registration) got \(option)(\(value)), a value never stored")
          continue
        }
        let round = option == .new ? stored : stored + 1
        guard round < rounds.count else {
          fail("registration #\(registration) got .old(\(value)), the last value, at \(position)")
          continue
        }
        records[registration].calls.append(
          Call(
            position: position, option: option, value: value, round: round, frontier: frontier,
            thread: thread))
        frontier = max(frontier, round)
      case .registering(let registration, let value):
        records[registration].registering = (position, value)
      case .registered(let registration, let value):
        records[registration].registered = (position, value)
      case .ending(let ended):
        for registration in ended where records[registration].ending == nil {
          records[registration].ending = (position, nil, false)
        }
      case .ended(let ended):
        for registration in ended
        where records[registration].ending?.end == nil && records[registration].ending != nil {
          records[registration].ending?.end = position
        }
      case .removedItself(let registration):
        if records[registration].ending == nil {
          records[registration].ending = (position, position, true)
        }
      case .ownerReleased(let owner):
        for registration in records.indices
        where registrations[registration].owner == owner
          && records[registration].ownerReleased == nil
          && (records[registration].registering?.position ?? .max) < position
        {
          records[registration].ownerReleased = position
        }
      case .ownerDied(let owner):
        for registration in records.indices
        where registrations[registration].owner == owner && records[registration].ending == nil
          && (records[registration].registering?.position ?? .max) < position
        {
          records[registration].ending = (position, position, true)
        }
      case .setReturned:
        break
      }
    }
  }

  /// Where the registration is sure to be in the list: its registering call returned, and so
  /// did that of every `.initial` registration whose `.initial` may have been running then
  /// (registrations made meanwhile join the list together with it).
  private func ready(_ registration: Int) -> Int {
    guard let registering = records[registration].registering?.position,
      let registered = records[registration].registered?.position
    else { return events.count }
    var ready = registered
    for other in records.indices where registrations[other].options.contains(.initial) {
      guard let otherRegistering = records[other].registering?.position,
        let otherRegistered = records[other].registered?.position
      else { continue }
      if otherRegistering < registered && otherRegistered > registering {
        ready = max(ready, otherRegistered)
      }
    }
    return ready
  }

  /// Whether `call` is certainly not part of its round: a later round had started, or it is an
  /// `.old` after the round's `.new` pass started, or it ran on another thread than the round.
  private func isCatchUp(_ call: Call) -> Bool {
    call.round < call.frontier
      || (call.option == .old && call.position > newPassStart[call.round])
      || call.thread != roundThread[call.round]
  }

  private func start(_ round: Int) -> Int {
    round < roundStart.count ? roundStart[round] : .max
  }

  private func describe(_ registration: Int) -> String {
    let options = registrations[registration].options
    let names = [(ObservableOptions.initial, "initial"), (.old, "old"), (.new, "new")]
      .filter { options.contains($0.0) }.map(\.1)
    let owner = registrations[registration].owner.map { " of owner \($0)" } ?? ""
    return "registration #\(registration) [\(names.joined(separator: ", "))]\(owner)"
  }

  private mutating func checkRegistration(
    _ registration: Int,
    inStep:
      inout [[Placed]]
  ) {
    let record = records[registration]
    let options = registrations[registration].options
    let name = describe(registration)
    guard let registering = record.registering, let registered = record.registered else {
      if record.initial != nil || !record.calls.isEmpty {
        fail("\(name) was called but its registration was not recorded")
      }
      return
    }
    guard let before = roundOf[registering.value], let after = roundOf[registered.value] else {
      fail("\(name): a value read around its registering call was never stored")
      return
    }
    // The registration point, as the first round due.
    var first: Int
    if options.contains(.initial) {
      guard let initial = record.initial else {
        fail("\(name) got no .initial")
        return
      }
      if record.extraInitials > 0 { fail("\(name) got .initial \(record.extraInitials + 1) times") }
      if initial.position > registered.position {
        fail("\(name)'s .initial came after its registering call returned")
      }
      guard let stored = roundOf[initial.value], stored >= before, stored <= after else {
        fail(
          "\(name)'s .initial(\(initial.value)) is not a value current during its registering call")
        return
      }
      first = stored + 1
    } else {
      if record.initial != nil { fail("\(name) got .initial without asking for it") }
      first = record.calls.first?.round ?? (after + 1)
      if first <= before || first > after + 1 {
        fail(
          "\(name) was first called for round \(first), but registered between rounds "
            + "\(before) and \(after + 1)")
        return
      }
    }
    // The reference: every call due from the registration point on.
    var expected: [(option: ObservableOptionsName, value: Int, round: Int)] = []
    if first < rounds.count {
      for round in first..<rounds.count {
        if options.contains(.old) { expected.append((.old, rounds[round].old, round)) }
        if options.contains(.new) { expected.append((.new, rounds[round].new, round)) }
      }
    }
    for (index, call) in record.calls.enumerated() {
      guard index < expected.count else {
        fail(
          "\(name): call \(index) \(call.option)(\(call.value)) at log position \(call.position) "
            + "is one more than due")
        return
      }
      let due = expected[index]
      guard due.option == call.option, due.value == call.value else {
        fail(
          "\(name): call \(index) is \(call.option)(\(call.value)) at log position "
            + "\(call.position), but \(due.option)(\(due.value)) of round \(due.round) is due "
            + "(a gap, a duplicate or a wrong old/new)")
        return
      }
    }
    let readyAt = ready(registration)
    // Rounds from this one on are delivered in step; earlier ones are caught up before it starts.
    let inStepFrom = frontierBefore[min(readyAt, events.count - 1)] + 2
    // How far the calls must reach.
    if let ending = record.ending {
      let later = record.calls.filter {
        $0.position > (ending.strict ? ending.start : ending.end ?? .max)
      }
      if ending.strict, let call = later.first {
        fail(
          "\(name) was called \(call.option)(\(call.value)) at log position \(call.position), "
            + "after it removed itself or its owner died at \(ending.start)")
      } else if Set(later.map(\.round)).count > 1 {
        fail(
          "\(name) got calls of \(Set(later.map(\.round)).count) rounds after its removal "
            + "returned at log position \(ending.end ?? -1); at most the round in progress may run")
      }
    }
    if let stop = record.lastDuePosition {
      // Every round finished before the ending started (or the owner was let go), once in
      // step, must have reached it.
      var lastDue = first - 1
      var round = first
      while round + 1 < rounds.count && start(round + 1) < stop {
        if round + 1 >= inStepFrom { lastDue = round }
        round += 1
      }
      checkReaches(registration, lastDue, expected: expected, name: name)
    } else {
      checkReaches(registration, rounds.count - 1, expected: expected, name: name)
    }
    // Catch-up calls first, all while one round is the newest; then calls in step.
    var caughtUpAt: Int?
    var inStepSeen = false
    for call in record.calls {
      // A catch-up runs through the round that was the newest when it began, and a call of the
      // newest round made after a catch-up began is part of that catch-up.
      let catchUp =
        isCatchUp(call) || call.round <= (caughtUpAt ?? -1)
        || (call.round == call.frontier && call.position > catchUpStart[call.frontier])
      if catchUp {
        if inStepSeen {
          fail(
            "\(name): \(call.option)(\(call.value)) of round \(call.round) at log position "
              + "\(call.position) came after round \(call.frontier) started, although it was "
              + "already called in step (rounds interleave)")
          return
        }
        if let frontier = caughtUpAt, call.frontier > frontier {
          fail(
            "\(name): its catch-up overlaps round \(call.frontier), which started after its "
              + "catch-up began at round \(frontier) (log position \(call.position))")
          return
        }
        caughtUpAt = caughtUpAt ?? call.frontier
        catchUps[call.frontier].append(
          Placed(
            position: call.position, registration: registration, option: call.option,
            round: call.round))
        if call.round >= inStepFrom || (start(inStepFrom) < call.position) {
          fail(
            "\(name): \(call.option)(\(call.value)) of round \(call.round) was caught up at log "
              + "position \(call.position), after round \(inStepFrom) started; a registration is "
              + "caught up before any round later than the one after its registering call returned",
            whileAnotherInitialRan: (registration, start(inStepFrom), call.position))
          return
        }
      } else {
        inStepSeen = true
        inStep[call.round].append(
          Placed(
            position: call.position, registration: registration, option: call.option,
            round: call.round))
      }
    }
  }

  private mutating func checkReaches(
    _ registration: Int, _ lastRound: Int,
    expected: [(option: ObservableOptionsName, value: Int, round: Int)], name: String
  ) {
    let due = expected.prefix { $0.round <= lastRound }.count
    let got = records[registration].calls.count
    if got < due {
      let missing = expected[got]
      fail(
        "\(name) is missing \(missing.option)(\(missing.value)) of round \(missing.round) "
          + "(got \(got) of the \(due) calls due through round \(lastRound))",
        whileAnotherInitialRan: (
          registration, start(missing.round), records[registration].ending?.start ?? events.count
        ))
    }
  }

  // MARK: - Per round

  private mutating func checkRounds(
    _ inStep: [[Placed]]
  ) {
    for round in 1..<rounds.count {
      let calls = inStep[round]

      for call in calls {
        if call.position < roundStart[round] {
          fail("round \(round): \(describe(call.registration)) was called before the anchor")
        } else if call.option == .new && call.position < newPassStart[round] {
          fail(
            "round \(round): \(describe(call.registration))'s .new at log position "
              + "\(call.position) came before the .old pass ended")
        }
      }
      for option in [ObservableOptionsName.old, .new] {
        checkOrder(calls.filter { $0.option == option }, "round \(round), .\(option) pass")
      }
      // A catch-up delivers each round's calls in registration order too.
      let caughtUp = Dictionary(grouping: catchUps[round]) { "\($0.round).\($0.option)" }
      for (key, calls) in caughtUp {
        checkOrder(calls, "the catch-up made during round \(round), round \(key)")
      }
    }
  }

  /// Fails if, among `calls` (in log order), one registration is called after another whose
  /// registering call began after the first one's returned.
  private mutating func checkOrder(
    _ calls: [Placed],
    _ what: String
  ) {
    let sorted = calls.sorted { $0.position < $1.position }
    for (index, earlier) in sorted.enumerated() {
      for later in sorted[(index + 1)...] {
        guard let laterRegistered = records[later.registration].registered?.position,
          let earlierRegistering = records[earlier.registration].registering?.position
        else { continue }
        if laterRegistered < earlierRegistering {
          fail(
            "\(what): \(describe(later.registration)) was called at log position "
              + "\(later.position), after \(describe(earlier.registration)), which registered later"
          )
          return
        }
      }
    }
  }

  // MARK: - Sets

  private mutating func checkSetsReturnDelivered() {
    var firstDue: [Int] = []
    var inStepFrom: [Int] = []
    for registration in records.indices {
      let record = records[registration]
      let options = registrations[registration].options
      guard let registered = record.registered, let after = roundOf[registered.value],
        options.contains(.old) || options.contains(.new)
      else {
        firstDue.append(.max)
        inStepFrom.append(.max)
        continue
      }
      let first =
        record.initial.flatMap { roundOf[$0.value].map { $0 + 1 } } ?? record.calls.first?.round
        ?? (after + 1)
      firstDue.append(first)
      inStepFrom.append(frontierBefore[min(ready(registration), events.count - 1)] + 2)
    }
    for (position, event) in events.enumerated() {
      guard case .setReturned(let value, let thread, let quick) = event, quick,
        let round = roundOf[value]
      else { continue }
      for registration in records.indices
      where firstDue[registration] <= round && inStepFrom[registration] <= round
        && (records[registration].lastDuePosition ?? .max) > position
      {
        let options = registrations[registration].options
        let dueCount = (options.contains(.old) ? 1 : 0) + (options.contains(.new) ? 1 : 0)
        let delivered = records[registration].calls.filter {
          $0.round == round && $0.position < position
        }
        if delivered.count < dueCount {
          fail(
            "thread \(thread)'s set of \(value) (round \(round)) returned at log position "
              + "\(position) before \(describe(registration)) got it",
            whileAnotherInitialRan: (registration, start(round), position))
        }
      }
    }
  }
}
