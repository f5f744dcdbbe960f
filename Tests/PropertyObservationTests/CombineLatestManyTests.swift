import PropertyObservation
import TestSupport
import Testing

@Suite("combineLatest of many sources")
struct CombineLatestManyTests {
  // MARK: - Variadic

  @Test func variadicCombineLatestOfFiveSourcesPublishesWhenAnyChanges() {
    let count = Observable(1)
    let name = Observable("a")
    let isOn = Observable(false)
    let ratio = Observable(0.5)
    let tag = Observable<String?>(nil)
    let combined = combineLatest(count, name, isOn, ratio, tag)
    #expect(combined.value == (1, "a", false, 0.5, nil))

    let log = RecordingLog<String>()
    let token = combined.observe(options: [.initial, .new]) { value, _ in
      log.append("\(value.0) \(value.1) \(value.2) \(value.3) \(value.4 ?? "-")")
    }
    tag.value = "t"
    ratio.value = 1
    isOn.value = true
    name.value = "b"
    count.value = 2
    #expect(
      log.events == [
        "1 a false 0.5 -", "1 a false 0.5 t", "1 a false 1.0 t", "1 a true 1.0 t",
        "1 b true 1.0 t", "2 b true 1.0 t",
      ])
    token.cancel()
  }

  @Test func variadicCombineLatestOfOneAndTwoSources() {
    let count = Observable(1)
    let name = Observable("a")
    let single: ReadOnlyObservable<Int> = combineLatest(count)
    let pair = combineLatest(count, name)
    count.value = 2
    #expect(single.value == 2)
    #expect(pair.value == (2, "a"))
  }

  @Test func theMethodFormsStillCombineTwoAndThreeSources() {
    let first = Observable(1)
    let second = Observable("b")
    let third = Observable(true)
    let pair: ReadOnlyObservable<(Int, String)> = first.combineLatest(second)
    let triple: ReadOnlyObservable<(Int, String, Bool)> = first.combineLatest(second, third)
    first.value = 2
    #expect(pair.value == (2, "b"))
    #expect(triple.value == (2, "b", true))
  }

  @Test func aSourcePassedTwicePublishesOncePerChangeWithItsNewValueInBothPositions() {
    let source = Observable(1)
    let other = Observable("x")
    let combined = combineLatest(source, other, source)
    let log = RecordingLog<String>()
    let token = combined.observe { value, _ in log.append("\(value.0)\(value.1)\(value.2)") }
    source.value = 2
    #expect(log.events == ["2x2"])
    token.cancel()
  }

  @Test func variadicCombineLatestStaysOrderedWhenAnObserverSetsAnotherSource() {
    let letter = Observable("a")
    let number = Observable(0)
    let flag = Observable(false)
    let combined = combineLatest(letter, number, flag)
    let follower = combined.observe { value, _ in
      if value.1 == 0 { number.value = value.0.count }
    }
    let log = RecordingLog<String>()
    let recorder = combined.observe { value, _ in log.append("\(value.0)\(value.1)\(value.2)") }
    letter.value = "bcd"
    #expect(log.events == ["bcd0false", "bcd3false"])
    withExtendedLifetime((follower, recorder)) {}
  }

  // MARK: - Array

  @Test func arrayCombineLatestPublishesTheArrayWhenAnySourceChanges() {
    let sources = (0..<4).map { Observable($0) }
    let combined = combineLatest(sources)
    let log = RecordingLog<[Int]>()
    let token = combined.observe(options: [.initial, .new]) { values, _ in log.append(values) }
    sources[2].value = 20
    sources[0].value = 10
    #expect(log.events == [[0, 1, 2, 3], [0, 1, 20, 3], [10, 1, 20, 3]])
    #expect(combined.value == [10, 1, 20, 3])
    token.cancel()
  }

  @Test func arrayCombineLatestAcceptsDerivedAndRootObservablesTogether() {
    let count = Observable(1)
    let sources: [ReadOnlyObservable<Int>] = [count, count.map { $0 * 10 }]
    let combined = combineLatest(sources)
    count.value = 2
    // A source and a value derived from it: one publication per source that changed.
    #expect(combined.value == [2, 20])
  }

  @Test func arrayCombineLatestOfNoSourcesIsAlwaysEmpty() {
    let combined = combineLatest([ReadOnlyObservable<Int>]())
    #expect(combined.value == [])
    #expect(String(describing: combined) == "ReadOnlyObservable<Array<Int>>([], observers: 0)")
  }

  @Test func arrayCombineLatestOfOneSourceWrapsItsValue() {
    let source = Observable("a")
    let combined = combineLatest([source])
    source.value = "b"
    #expect(combined.value == ["b"])
  }

  // MARK: - Lifetimes

  @Test func combinedObservablesKeepTheirSourcesAliveAndGoWithTheirLastUser() {
    weak var weakSource: Observable<Int>?
    weak var weakVariadic: ReadOnlyObservable<(Int, Int, Int, Int)>?
    weak var weakArray: ReadOnlyObservable<[Int]>?
    let other = Observable(0)
    do {
      let variadic: ReadOnlyObservable<(Int, Int, Int, Int)>
      let array: ReadOnlyObservable<[Int]>
      do {
        let source = Observable(1)
        weakSource = source
        variadic = combineLatest(source, other, source, other)
        array = combineLatest([source, other])
      }
      weakVariadic = variadic
      weakArray = array
      #expect(weakSource != nil)
      #expect(other.observerCount == 3)
      weakSource?.value = 5
      #expect(variadic.value == (5, 0, 5, 0))
      #expect(array.value == [5, 0])
    }
    #expect(weakVariadic == nil)
    #expect(weakArray == nil)
    #expect(weakSource == nil)
    #expect(other.observerCount == 0)
  }

  // MARK: - Threads

  @Test func combinedValuesNeverGoBackWhenSourcesChangeOnDifferentThreads() async {
    await onItsOwnThread {
      let sources = (0..<3).map { _ in Observable(0) }
      let variadic = combineLatest(sources[0], sources[1], sources[2])
      let array = combineLatest(sources)
      let variadicLog = RecordingLog<[Int]>()
      let arrayLog = RecordingLog<[Int]>()
      let tokens = [
        variadic.observe { value, _ in variadicLog.append([value.0, value.1, value.2]) },
        array.observe { values, _ in arrayLog.append(values) },
      ]
      runConcurrently(3) { index in
        for _ in 0..<200 { sources[index].update { $0 += 1 } }
      }
      for events in [variadicLog.events, arrayLog.events] {
        #expect(events.count == 600)
        #expect(zip(events, events.dropFirst()).allSatisfy { zip($0, $1).allSatisfy { $0 <= $1 } })
        #expect(events.last == [200, 200, 200])
      }
      withExtendedLifetime(tokens) {}
    }
  }

  @Test func threadsThatComeAndGoKeepTheirPropagationsApart() async {
    // Each round of three new threads: a thread's context is released when it exits, and the
    // next thread's may be made at its address while the pipeline still knows the old one's
    // propagations. 11 of 300 rounds published 400 values instead of 600 when two contexts'
    // propagation serials could be equal.
    await onItsOwnThread {
      var counts: [Int] = []
      for _ in 0..<150 {
        let sources = (0..<3).map { _ in Observable(0) }
        let log = RecordingLog<[Int]>()
        let token = combineLatest(sources).observe { values, _ in log.append(values) }
        runConcurrently(3) { index in
          for _ in 0..<200 { sources[index].update { $0 += 1 } }
        }
        counts.append(log.events.count)
        withExtendedLifetime(token) {}
      }
      #expect(counts == Array(repeating: 600, count: 150))
    }
  }
}
