import Dispatch
import PropertyObservation
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("Derived observables")
struct DerivedObservableTests {
  // MARK: - map

  @Test func mapSeedsFromTheCurrentValueAndPublishesEveryChange() {
    let source = Observable(1)
    let doubled = source.map { $0 * 2 }
    #expect(doubled.value == 2)

    let log = RecordingLog<String>()
    let token = doubled.observe(options: [.initial, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    source.value = 3
    source.value = 3
    #expect(log.events == ["[.initial] 2", "[.new] 6", "[.new] 6"])
    #expect(doubled.value == 6)
    token.cancel()
  }

  @Test func aReEntrantSetJoinsThePropagationOfTheChangeBeingDelivered() {
    // The Ordering contract: a set inside a callback belongs to the propagation of the change
    // being delivered, even when it sets the same source; the source's observers see each
    // change, a value recomputed after the propagation sees where it ended.
    let source = Observable(0)
    let pair = source.combineLatest(source.map { $0 * 10 })
    let seen = RecordingLog<Int>()
    let published = RecordingLog<String>()
    let setter = source.observe { value, _ in
      seen.append(value)
      if value == 1 { source.value = 2 }
    }
    let observer = pair.observe { value, _ in published.append("\(value.0),\(value.1)") }
    source.value = 1
    #expect(seen.events == [1, 2])
    #expect(published.events == ["2,20"])
    withExtendedLifetime((setter, observer)) {}
  }

  @Test func mapTransformRunsOncePerChangeWhateverTheNumberOfObservers() {
    let source = Observable(1)
    let transforms = RecordingLog<Int>()
    let label = source.map { value -> String in
      transforms.append(value)
      return "#\(value)"
    }
    let received = RecordingLog<String>()
    let tokens = (0..<3).map { index in
      label.observe { value, _ in received.append("\(index):\(value)") }
    }
    source.value = 2
    source.value = 3

    #expect(transforms.events == [1, 2, 3])
    #expect(received.events == ["0:#2", "1:#2", "2:#2", "0:#3", "1:#3", "2:#3"])
    withExtendedLifetime(tokens) {}
  }

  @Test func derivedObservableDeliversOldAndNewLikeAnObservable() {
    let source = Observable(1)
    let negated = source.map { -$0 }
    let log = RecordingLog<String>()
    negated.addObserver(log, options: [.old, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    source.value = 2
    #expect(log.events == ["[.old] -1", "[.new] -2"])
  }

  @Test func mapsCanBeChained() {
    let source = Observable(2)
    let text = source.map { $0 * 10 }.map { "\($0)%" }
    let log = RecordingLog<String>()
    let token = text.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    source.value = 5
    #expect(log.events == ["20%", "50%"])
    token.cancel()
  }

  // MARK: - removeDuplicates

  @Test func removeDuplicatesSkipsConsecutiveRepeats() {
    let source = Observable(1)
    let distinct = source.removeDuplicates()
    let log = RecordingLog<String>()
    let token = distinct.observe(options: [.initial, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    for value in [1, 2, 2, 1, 1] { source.value = value }
    #expect(log.events == ["[.initial] 1", "[.new] 2", "[.new] 1"])
    token.cancel()
  }

  @Test func removeDuplicatesByComparesWithTheLastPublishedValue() {
    let source = Observable(0)
    let coarse = source.removeDuplicates { abs($0 - $1) < 5 }
    let log = RecordingLog<Int>()
    let token = coarse.observe(options: [.initial, .new]) { value, _ in log.append(value) }
    // 8 is within 5 of 6 (published) and 12 within 5 of 8 (not published): 12 still publishes.
    for value in [3, 6, 8, 12] { source.value = value }
    #expect(log.events == [0, 6, 12])
    #expect(coarse.value == 12)
    token.cancel()
  }

  // MARK: - combineLatest

  @Test func combineLatestPairsTheLatestValuesOfBothSources() {
    let count = Observable(1)
    let unit = Observable("apple")
    let combined = count.combineLatest(unit)
    #expect(combined.value == (1, "apple"))

    let log = RecordingLog<String>()
    let token = combined.observe(options: [.initial, .new]) { pair, _ in
      log.append("\(pair.0) \(pair.1)")
    }
    count.value = 2
    unit.value = "pear"
    #expect(log.events == ["1 apple", "2 apple", "2 pear"])
    token.cancel()
  }

  @Test func combineLatestOfThreePublishesWhenAnySourceChanges() {
    let first = Observable(1)
    let second = Observable("b")
    let third = Observable(true)
    let combined = first.combineLatest(second, third)
    let log = RecordingLog<String>()
    let token = combined.observe(options: [.initial, .new]) { triple, _ in
      log.append("\(triple.0) \(triple.1) \(triple.2)")
    }
    third.value = false
    second.value = "c"
    first.value = 2
    #expect(log.events == ["1 b true", "1 b false", "1 c false", "2 c false"])
    token.cancel()
  }

  @Test func combineLatestRunsItsTransformOncePerUpstreamChange() {
    let width = Observable(2)
    let height = Observable(3)
    let areas = RecordingLog<Int>()
    let area = width.combineLatest(height).map { width, height -> Int in
      areas.append(width * height)
      return width * height
    }
    let tokens = (0..<2).map { _ in area.observe { _, _ in } }
    width.value = 4
    height.value = 5
    #expect(areas.events == [6, 12, 20])
    withExtendedLifetime(tokens) {}
  }

  // MARK: - Lifetimes

  @Test func derivedObservableKeepsItsSourceAlive() {
    weak var weakSource: Observable<Int>?
    let derived: ReadOnlyObservable<Int>
    do {
      let source = Observable(1)
      weakSource = source
      derived = source.map { $0 + 1 }
    }
    #expect(weakSource != nil)
    weakSource?.value = 5
    #expect(derived.value == 6)
  }

  /// A one-input derived observable's registration holds its link, which keeps the source
  /// alive until the derived observable cancels it as it goes: nothing may keep the source after.
  @Test(arguments: ["map", "removeDuplicates", "filter", "map of map"])
  func derivedObservableLetsItsSourceGoWhenItGoes(_ operatorName: String) {
    weak var weakSource: Observable<Int>?
    weak var weakDerived: ReadOnlyObservable<Int>?
    do {
      let source = Observable(1)
      weakSource = source
      let (derived, expected): (ReadOnlyObservable<Int>, Int) =
        switch operatorName {
        case "map": (source.map { $0 + 1 }, 3)
        case "removeDuplicates": (source.removeDuplicates(), 2)
        case "filter": (source.filter(initial: 0) { $0 > 0 }, 2)
        default: (source.map { $0 + 1 }.map { $0 * 2 }, 6)
        }
      weakDerived = derived
      source.value = 2
      #expect(derived.value == expected)
    }
    #expect(weakDerived == nil)
    #expect(weakSource == nil)
  }

  @Test func derivedObservableGoesWithItsLastUserAndEndsItsRegistration() {
    let source = Observable(1)
    let otherSource = Observable("x")
    weak var weakMapped: ReadOnlyObservable<Int>?
    weak var weakCombined: ReadOnlyObservable<(Int, String)>?
    do {
      let mapped = source.map { $0 }
      let combined = source.combineLatest(otherSource)
      weakMapped = mapped
      weakCombined = combined
      #expect(source.observerCount == 2)
      #expect(otherSource.observerCount == 1)
    }
    #expect(weakMapped == nil)
    #expect(weakCombined == nil)
    #expect(source.observerCount == 0)
    #expect(otherSource.observerCount == 0)
    source.value = 2
  }

  @Test func tokenOnAnInlineChainKeepsTheChainAliveUntilReleased() {
    let source = Observable(1)
    let log = RecordingLog<String>()
    do {
      let token = source.map { "v\($0)" }.removeDuplicates().observe { value, _ in
        log.append(value)
      }
      source.value = 2
      source.value = 2
      source.value = 3
      withExtendedLifetime(token) {}
    }
    #expect(log.events == ["v2", "v3"])
    #expect(source.observerCount == 0)
    source.value = 4
    #expect(log.events == ["v2", "v3"])
  }

  // MARK: - Ordering

  @Test func chainDeliversEveryChangeInOrderUnderReentrantSets() {
    let source = Observable(0)
    let tens = source.map { $0 * 10 }
    let log = RecordingLog<Int>()
    // The first observer sets the source again from inside the derived round; the second one
    // must still see every value, in order, each once.
    let stepper = tens.observe { value, _ in
      if value < 30 { source.value = value / 10 + 1 }
    }
    let recorder = tens.observe { value, _ in log.append(value) }
    source.value = 1
    #expect(log.events == [10, 20, 30])
    #expect(source.value == 3)
    #expect(tens.value == 30)
    withExtendedLifetime((stepper, recorder)) {}
  }

  @Test func combineLatestStaysOrderedWhenAnObserverSetsTheOtherSource() {
    let letter = Observable("a")
    let number = Observable(0)
    let combined = letter.combineLatest(number)
    let log = RecordingLog<String>()
    let follower = combined.observe { pair, _ in
      if pair.1 == 0 { number.value = pair.0.count }
    }
    let recorder = combined.observe { pair, _ in log.append("\(pair.0)\(pair.1)") }
    letter.value = "bcd"
    #expect(log.events == ["bcd0", "bcd3"])
    withExtendedLifetime((follower, recorder)) {}
  }

  // MARK: - Threads

  @Test func derivedCreatedWhileItsSourceIsDeliveringOnAnotherThreadIsSeededAndCatchesUp() async {
    await onItsOwnThread {
      let source = Observable(1)
      let round = Gate("the round of 2")
      let blocker = source.observe { value, _ in
        if value == 2 { round.block() }
      }
      let log = RecordingLog<Int>()
      let (tens, recorder) = round.runOnAnotherThread {
        source.value = 2
      } whileBlocked: {
        // The source delivers `.initial` inside the registering call although another thread is
        // in the middle of a round, so the derived value is seeded at once and never republished.
        let tens = source.map { $0 * 10 }
        #expect(tens.value == 20)
        return (tens, tens.observe { value, _ in log.append(value) })
      }
      source.value = 3
      #expect(log.events == [30])
      #expect(tens.value == 30)
      withExtendedLifetime((blocker, recorder)) {}
    }
  }

  @Test func combineLatestAndRemoveDuplicatesCreatedWhileASourceIsBusyAreSeeded() async {
    await onItsOwnThread {
      let source = Observable(1)
      let other = Observable("r")
      let round = Gate("the round of 2")
      let blocker = source.observe { value, _ in
        if value == 2 { round.block() }
      }
      let log = RecordingLog<String>()
      let tokens = round.runOnAnotherThread {
        source.value = 2
      } whileBlocked: {
        let combined = source.combineLatest(other)
        let distinct = source.removeDuplicates()
        #expect(combined.value == (2, "r"))
        #expect(distinct.value == 2)
        let combinedToken = combined.observe { pair, _ in log.append("\(pair.0)\(pair.1)") }
        let distinctToken = distinct.observe { value, _ in log.append("distinct \(value)") }
        return [combinedToken, distinctToken]
      }
      other.value = "s"
      source.value = 3
      // `removeDuplicates` (one source) publishes inside the source's round; `combineLatest`
      // when the propagation ends.
      #expect(log.events == ["2s", "distinct 3", "3s"])
      withExtendedLifetime((blocker, tokens)) {}
    }
  }

  @Test func derivedValuesStayInOrderWhenTheSourceIsSetFromManyThreads() async {
    await onItsOwnThread {
      let source = Observable(0)
      let mirrored = source.map { $0 }
      let log = RecordingLog<Int>()
      let token = mirrored.observe { value, _ in log.append(value) }
      runConcurrently(4) { _ in
        for _ in 0..<250 { source.update { $0 += 1 } }
      }
      #expect(log.events == Array(1...1000))
      #expect(mirrored.value == 1000)
      token.cancel()
    }
  }

  @Test func operatorsBuiltWhileOtherThreadsSetTheSourceMissNoChange() async {
    await onItsOwnThread {
      // A one-input operator is built by its registration's `.initial` call; a change that a
      // round on another thread delivers right after must reach the built value, in order.
      let source = Observable(0)
      let built = RecordingLog<(ReadOnlyObservable<Int>, ObservationToken, RecordingLog<Int>)>()
      runConcurrently(3) { index in
        if index == 0 {
          for _ in 0..<40 {
            let doubled = source.map { $0 * 2 }.removeDuplicates().filter(initial: -1) { $0 >= 0 }
            let seen = RecordingLog<Int>()
            let token = doubled.observe(options: [.initial, .new]) { value, _ in seen.append(value)
            }
            built.append((doubled, token, seen))
          }
        } else {
          for _ in 0..<500 { source.update { $0 += 1 } }
        }
      }
      #expect(source.value == 1000)
      for (doubled, token, seen) in built.events {
        // A change made while the building thread held a derived value's turn (its `.initial`)
        // goes to the library's delivery queue and may arrive after the setters returned.
        #expect(eventually { doubled.value == 2000 && seen.events.last == 2000 })
        #expect(doubled.value == 2000)
        let values = seen.events
        #expect(values.last == 2000)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
        token.cancel()
      }
    }
  }

  @Test func aDerivedValuesOnlyObserverGetsOldThenNewAndIsPrunedWhenItsOwnerDies() {
    // A derived value with one observer calls it without a round of its own; the rules are
    // those of a round.
    final class Owner {}
    let source = Observable(1)
    let doubled = source.map { $0 * 2 }
    let log = RecordingLog<String>()
    var owner: Owner? = Owner()
    doubled.addObserver(owner!, options: [.old, .new]) { value, option in
      log.append("\(option) \(value)")
    }
    source.value = 2
    #expect(log.events == ["[.old] 2", "[.new] 4"])
    owner = nil
    source.value = 3
    #expect(log.events == ["[.old] 2", "[.new] 4"])
    #expect(doubled.observerCount == 0)
    #expect(doubled.value == 6)
  }

  @Test func observersJoiningAChainsMiddleWhileItsSourceChangesMissNoLaterChange() async {
    await onItsOwnThread {
      // While the middle of a chain has one observer (the next operator), its changes skip the
      // round; registrations and cancellations from another thread meanwhile must still see every
      // change made after them, in order, and the end of the chain every change.
      let source = Observable(0)
      let doubled = source.map { $0 * 2 }
      let end = doubled.map { $0 + 1 }
      let ends = RecordingLog<Int>()
      let endToken = end.observe { value, _ in ends.append(value) }
      let joined = RecordingLog<RecordingLog<Int>>()
      runConcurrently(2) { index in
        if index == 0 {
          for _ in 0..<2000 { source.update { $0 += 1 } }
        } else {
          for _ in 0..<200 {
            let seen = RecordingLog<Int>()
            let token = doubled.observe(options: [.initial, .new]) { value, _ in seen.append(value)
            }
            spin(microseconds: 50) { seen.events.count >= 3 }
            token.cancel()
            joined.append(seen)
          }
        }
      }
      // Changes that found the middle's turn taken by a registering thread go to the library's
      // delivery queue and may arrive after the setter returned: wait for them.
      #expect(eventually { ends.events.count >= 2000 })
      #expect(ends.events == (1...2000).map { $0 * 2 + 1 })
      for seen in joined.events {
        let values = seen.events
        #expect(zip(values, values.dropFirst()).allSatisfy { $1 == $0 + 2 })
      }
      endToken.cancel()
    }
  }

  @Test func combineLatestNeverGoesBackWhenBothSourcesChangeOnDifferentThreads() async {
    await onItsOwnThread {
      let left = Observable(0)
      let right = Observable(0)
      let combined = left.combineLatest(right)
      let log = RecordingLog<(Int, Int)>()
      let token = combined.observe { pair, _ in log.append(pair) }
      runConcurrently(2) { index in
        let side = index == 0 ? left : right
        for _ in 0..<300 { side.update { $0 += 1 } }
      }
      let events = log.events
      #expect(events.count == 600)
      #expect(zip(events, events.dropFirst()).allSatisfy { $0.0 <= $1.0 && $0.1 <= $1.1 })
      #expect(combined.value == (300, 300))
      token.cancel()
    }
  }
}

/// Polls `condition` until it holds or ``testTimeout`` passes; returns whether it held.
private func eventually(_ condition: () -> Bool) -> Bool {
  let deadline = DispatchTime.now() + testTimeout
  while !condition() {
    guard DispatchTime.now() < deadline else { return false }
    usleep(1_000)
  }
  return true
}
