import Dispatch
import PropertyObservation
import TestSupport
import Testing

@Suite("ReadOnlyObservable.values")
struct AsyncValuesTests {
  // MARK: - Order

  @Test func valuesStartWithTheCurrentValueThenEveryChangeInOrder() async {
    let counter = Observable(0)
    var iterator = counter.values.makeAsyncIterator()
    // Set before the consumer asks: every value waits in the buffer.
    counter.value = 1
    counter.value = 2
    counter.value = 3
    var seen: [Int] = []
    for _ in 0..<4 {
      if let value = await iterator.next() { seen.append(value) }
    }
    #expect(seen == [0, 1, 2, 3])
  }

  @Test func theFirstValueIsTheValueCurrentWhenIterationStarts() async {
    let counter = Observable(0)
    let sequence = counter.values
    counter.value = 5
    var iterator = sequence.makeAsyncIterator()
    counter.value = 6
    #expect(await iterator.next() == 5)
    #expect(await iterator.next() == 6)
  }

  // `next(isolation:)` (what `for await` calls) keeps the consumer on the main actor while it
  // waits. The producer runs on the main actor too, so it can only run once the consumer is
  // suspended in `next`: every set in these two tests happens while the consumer waits.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @MainActor
  @Test func valuesSetWhileTheConsumerIsSuspendedAreAllKeptByDefault() async {
    let counter = Observable(0)
    var iterator = counter.values.makeAsyncIterator()
    #expect(await iterator.next(isolation: #isolation) == 0)
    Task { @MainActor in
      counter.value = 1
      counter.value = 2
      counter.value = 3
    }
    #expect(await iterator.next(isolation: #isolation) == 1)
    #expect(await iterator.next(isolation: #isolation) == 2)
    #expect(await iterator.next(isolation: #isolation) == 3)
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @MainActor
  @Test func valuesSetWhileTheConsumerIsSuspendedCollapseToTheNewestWithNewest() async {
    let counter = Observable(0)
    var iterator = counter.values(bufferingPolicy: .newest).makeAsyncIterator()
    #expect(await iterator.next(isolation: #isolation) == 0)
    Task { @MainActor in
      counter.value = 1
      counter.value = 2
      counter.value = 3
    }
    // The first set wakes the consumer, but it runs only after the producer is done: by then
    // the newest value is the only one kept.
    #expect(await iterator.next(isolation: #isolation) == 3)
    Task { @MainActor in counter.value = 4 }
    #expect(await iterator.next(isolation: #isolation) == 4)
  }

  @Test(arguments: [false, true])
  func valuesSetFromAnotherThreadInLockstepArriveInOrder(newestOnly: Bool) async {
    await onItsOwnThread {
      // Ping-pong: the producer sets the next value only after the consumer has taken the previous
      // one, so most sets find the consumer suspended in `next()`. Both policies then see every
      // value, because none is ever waiting when the next arrives.
      let counter = Observable(0)
      let sequence = newestOnly ? counter.values(bufferingPolicy: .newest) : counter.values
      let taken = Gate("the consumer's turn")
      let last = 300
      let producer = runInBackground {
        for value in 1...last {
          taken.block()
          counter.value = value
        }
      }
      var seen: [Int] = []
      for await value in sequence {
        seen.append(value)
        if value == last { break }
        taken.open()
      }
      await producer.finished("the producer")
      #expect(seen == Array(0...last))
      #expect(counter.observerCount == 0)
    }
  }

  @Test func unboundedBufferingKeepsEveryValueFromAFastProducer() async {
    await onItsOwnThread {
      let counter = Observable(0)
      let last = 2_000
      var iterator = counter.values.makeAsyncIterator()
      let producer = runInBackground {
        for value in 1...last { counter.value = value }
      }
      var seen: [Int] = []
      while seen.last != last, let value = await iterator.next() {
        seen.append(value)
      }
      await producer.finished("the producer")
      #expect(seen == Array(0...last))
    }
  }

  @Test func newestBufferingSkipsToTheLatestValue() async {
    let counter = Observable(0)
    var iterator = counter.values(bufferingPolicy: .newest).makeAsyncIterator()
    counter.value = 1
    counter.value = 2
    counter.value = 3
    #expect(await iterator.next() == 3)
    counter.value = 4
    #expect(await iterator.next() == 4)
  }

  @Test func newestBufferingNeverGoesBackwardsUnderAFastProducer() async {
    await onItsOwnThread {
      let counter = Observable(0)
      let last = 2_000
      var iterator = counter.values(bufferingPolicy: .newest).makeAsyncIterator()
      let producer = runInBackground {
        for value in 1...last { counter.value = value }
      }
      var seen: [Int] = []
      while seen.last != last, let value = await iterator.next() {
        seen.append(value)
      }
      await producer.finished("the producer")
      // `.newest` keeps only the newest value not yet taken: when the producer runs before the
      // first `next()`, even the initial 0 is replaced, so the first value seen is any value
      // set so far, never one that was not set.
      #expect(seen.first.map { (0...last).contains($0) } == true)
      #expect(seen.last == last)
      #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
    }
  }

  @Test func eachLoopGetsItsOwnRegistration() async {
    let counter = Observable(0)
    let sequence = counter.values
    var first = sequence.makeAsyncIterator()
    counter.value = 1
    var second = sequence.makeAsyncIterator()
    #expect(counter.observerCount == 2)
    counter.value = 2
    #expect(await first.next() == 0)
    #expect(await first.next() == 1)
    #expect(await first.next() == 2)
    #expect(await second.next() == 1)
    #expect(await second.next() == 2)
  }

  // MARK: - Ending

  @Test func cancellingTheTaskEndsTheLoopAndTheRegistration() async {
    let counter = Observable(0)
    let (received, receivedContinuation) = AsyncStream.makeStream(of: Int.self)
    let consumer = Task {
      var seen: [Int] = []
      for await value in counter.values {
        seen.append(value)
        receivedContinuation.yield(value)
      }
      return seen
    }
    var receivedIterator = received.makeAsyncIterator()
    #expect(await receivedIterator.next() == 0)
    counter.value = 1
    #expect(await receivedIterator.next() == 1)
    #expect(counter.observerCount == 1)

    consumer.cancel()
    #expect(await consumer.value == [0, 1])
    #expect(counter.observerCount == 0)
  }

  @Test func nextReturnsNilForeverAfterCancellation() async {
    let counter = Observable(0)
    let task = Task {
      var iterator = counter.values.makeAsyncIterator()
      withUnsafeCurrentTask { $0?.cancel() }
      let afterCancel = await iterator.next()
      // Cancellation itself ends the registration, while the iterator is still alive.
      let observersAfterCancel = counter.observerCount
      counter.value = 1
      let later = await iterator.next()
      return [afterCancel, observersAfterCancel, later]
    }
    #expect(await task.value == [nil, 0, nil])
    #expect(counter.observerCount == 0)
  }

  @Test func leavingTheLoopEndsTheRegistration() async {
    let counter = Observable(0)
    for await value in counter.values {
      #expect(counter.observerCount == 1)
      if value == 2 { break }
      counter.value = value + 1
    }
    #expect(counter.observerCount == 0)
    #expect(counter.value == 2)
  }

  @Test func releasingAnUnusedIteratorEndsTheRegistration() {
    let counter = Observable(0)
    do {
      let iterator = counter.values.makeAsyncIterator()
      #expect(counter.observerCount == 1)
      withExtendedLifetime(iterator) {}
    }
    #expect(counter.observerCount == 0)
  }

  // MARK: - Deinits that set the observable (issue 31, item 1)

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func aTakenValueWhoseDeinitSetsTheObservableDoesNotHangTheLoop() async {
    let finished = await finishesWithin(seconds: testTimeout) {
      var (_, iterator) = SelfSettingItem.bufferedInIterator(.unbounded)
      // Items 1 and 2 are held by the buffer alone (item 3 replaced them in the box), and by
      // nothing once the loop has taken them.
      var seen: [Int?] = []
      for _ in 0..<4 { seen.append(await iterator.next()??.number) }
      // Items 1 and 2 set nil when released (the third is still in the box).
      seen.append(await iterator.next()??.number)
      seen.append(await iterator.next()??.number)
      return seen
    }
    #expect(finished == [nil, 1, 2, 3, nil, nil])
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func cancellingWhileValuesWhoseDeinitSetsTheObservableAreBufferedDoesNotHang() async {
    let finished = await finishesWithin(seconds: testTimeout) {
      var (observable, iterator) = SelfSettingItem.bufferedInIterator(.unbounded)
      withUnsafeCurrentTask { $0?.cancel() }
      // Cancellation drops the buffer: items 1 and 2 go, and set the observable.
      let afterCancel = await iterator.next()
      return [afterCancel??.number, observable.value?.number]
    }
    #expect(finished == [nil, nil])
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func aNewestBufferReplacingAValueWhoseDeinitSetsTheObservableDoesNotHang() async {
    let finished = await finishesWithin(seconds: testTimeout) {
      var (observable, iterator) = SelfSettingItem.bufferedInIterator(.newest)
      // Each set replaced the buffered item, the only holder of the one before, whose `nil`
      // was delivered (and replaced in turn) before the next item was set.
      return [await iterator.next()??.number, observable.value?.number]
    }
    #expect(finished == [3, 3])
  }

  // MARK: - Lifetimes

  @Test func anAbandonedLoopDoesNotKeepTheObservableAlive() async {
    weak var weakCounter: Observable<Int>?
    do {
      let counter = Observable(0)
      weakCounter = counter
      var seen: [Int] = []
      for await value in counter.values {
        seen.append(value)
        if value == 3 { break }
        counter.value = value + 1
      }
      #expect(seen == [0, 1, 2, 3])
    }
    #expect(weakCounter == nil)
  }

  @Test func aCancelledLoopDoesNotKeepTheObservableAlive() async {
    weak var weakCounter: Observable<Int>?
    do {
      let counter = Observable(0)
      weakCounter = counter
      let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
      let consumer = Task {
        for await _ in counter.values {
          startedContinuation.yield()
        }
      }
      var startedIterator = started.makeAsyncIterator()
      await startedIterator.next()
      consumer.cancel()
      await consumer.value
    }
    #expect(weakCounter == nil)
  }

  @Test func anInlineChainLivesWhileItIsIterated() async {
    let source = Observable(1)
    weak var weakDerived: ReadOnlyObservable<Int>?
    var seen: [Int] = []
    // Built inline, as `source.map { $0 * 10 }.values` would be: only the loop's iterator holds
    // the derived observable.
    for await value in makeDerivedChain(
      from: source, transform: { $0 * 10 },
      created: {
        weakDerived = $0
      }
    ).values {
      seen.append(value)
      #expect(weakDerived != nil)
      if value == 30 { break }
      source.value += 1
    }
    #expect(seen == [10, 20, 30])
    #expect(weakDerived == nil)
  }

  // MARK: - Isolation and Sendable

  @MainActor
  @Test func nonSendableValuesCanBeIteratedOnTheMainActor() async {
    let box = Observable(NonSendableBox(1))
    var seen: [Int] = []
    for await value in box.values {
      seen.append(value.number)
      if value.number == 3 { break }
      box.value = NonSendableBox(value.number + 1)
    }
    #expect(seen == [1, 2, 3])
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func theSequenceIsSendableAndNeverThrows() async {
    func requireSendableNonThrowing<Sequence: AsyncSequence & Sendable>(
      _ sequence: Sequence
    ) -> Sequence where Sequence.Failure == Never {
      sequence
    }
    let counter = Observable(7)
    var iterator = requireSendableNonThrowing(counter.values).makeAsyncIterator()
    #expect(await iterator.next() == 7)
  }
}
