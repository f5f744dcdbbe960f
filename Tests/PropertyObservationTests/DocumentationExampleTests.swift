import PropertyObservation
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The worked examples of the DocC articles, run as written, so an article cannot drift from the
/// code. When one of these fails, fix the article's table or prose along with the code.
@Suite struct DocumentationExampleTests {
  /// "The ordering contract": the table of the worked example, row for row.
  @MainActor @Test func orderingArticleWorkedExampleDeliversTheTableInOrder() {
    let score = Observable(0)
    var log: [String] = []
    let a = DocumentationOwner()
    let b = DocumentationOwner()
    let c = DocumentationOwner()
    let d = DocumentationOwner()

    score.addObserver(a, options: [.old, .new]) { value, option in
      log.append("A \(option) \(value)")
    }
    score.addObserver(b) { value, option in
      log.append("B \(option) \(value)")
      guard value == 1 else { return }
      score.addObserver(d, options: [.initial, .new]) { value, option in
        log.append("D \(option) \(value)")
      }
      score.value = 2
      log.append("B reads \(score.value)")
    }
    score.addObserver(c, options: [.old, .new]) { value, option in
      log.append("C \(option) \(value)")
    }

    score.value = 1
    log.append("set returns")

    #expect(
      log == [
        "A [.old] 0",
        "C [.old] 0",
        "A [.new] 1",
        "B [.new] 1",
        "D [.initial] 1",
        "B reads 2",
        "C [.new] 1",
        "A [.old] 1",
        "C [.old] 1",
        "A [.new] 2",
        "B [.new] 2",
        "C [.new] 2",
        "D [.new] 2",
        "set returns",
      ])
  }

  /// "The ordering contract": removal inside a round and re-adding with `removeIfExists`.
  @MainActor @Test func orderingArticleRemovalAndReAddingExample() {
    let flag = Observable(false)
    var log: [String] = []
    let first = DocumentationOwner()
    let second = DocumentationOwner()

    flag.addObserver(first, options: [.old, .new]) { value, option in
      log.append("first \(option) \(value)")
      if option == .old { flag.removeObserver(second) }
    }
    flag.addObserver(second, options: [.old, .new]) { value, option in
      log.append("second \(option) \(value)")
    }
    flag.value = true

    // Re-adding `first` replaces its registration and moves it behind `second`.
    flag.addObserver(second) { value, _ in log.append("second again \(value)") }
    flag.addObserver(first) { value, _ in log.append("first again \(value)") }
    flag.value = false

    #expect(
      log == [
        "first [.old] false",
        "first [.new] true",
        "second again false",
        "first again false",
      ])
  }

  /// "Threading": a set from another thread that would wait for a round waiting on it (here, a
  /// callback blocked until the set returns) is queued whole, returns, and runs right after the
  /// running propagation, on the thread that runs it.
  @Test func threadingArticleASetThatCannotWaitIsQueuedAfterTheRunningPropagation() async {
    await onItsOwnThread {
      let progress = Observable(0)
      let log = RecordingLog<String>()
      let round = Gate("the round of 1")
      let setter = pthread_self()
      let owner = DocumentationOwner()

      progress.addObserver(owner) { value, _ in
        let onSetter = pthread_equal(pthread_self(), setter) != 0
        log.append("callback \(value) on \(onSetter ? "the setting thread" : "another thread")")
        if value == 1 { round.block() }
      }
      round.run {
        progress.value = 1
      } whileBlockedOnAnotherThread: {
        progress.value = 2
        log.append("other thread's set returned; value is \(progress.value)")
      }

      #expect(
        log.events == [
          "callback 1 on the setting thread",
          "other thread's set returned; value is 1",
          "callback 2 on the setting thread",
        ])
    }
  }

  /// "Threading": cancelling a token on another thread while a round runs takes effect at the
  /// round boundary, so the callback still runs for that round.
  @Test func threadingArticleCrossThreadCancelTakesEffectAtTheRoundBoundary() async {
    await onItsOwnThread {
      let level = Observable(0)
      let log = RecordingLog<String>()
      let round = Gate("the round of 1")

      let first = level.observe { value, _ in
        log.append("first \(value)")
        if value == 1 { round.block() }
      }
      let second = level.observe { value, _ in log.append("second \(value)") }
      round.run {
        level.value = 1
      } whileBlockedOnAnotherThread: {
        second.cancel()
        log.append("cancelled on another thread")
      }
      level.value = 2
      withExtendedLifetime(first) {}

      #expect(
        log.events == [
          "first 1",
          "cancelled on another thread",
          "second 1",
          "first 2",
        ])
    }
  }

  /// "Threading": registering with `.initial` on another thread while a round runs still gets
  /// `.initial` inside the call, on the registering thread; later changes come from the deliverer.
  @Test func threadingArticleRegistrationDuringAnotherThreadsRoundGetsInitialInsideTheCall() async {
    await onItsOwnThread {
      let temperature = Observable(20)
      let log = RecordingLog<String>()
      let round = Gate("the round of 21")
      let setter = pthread_self()
      let first = DocumentationOwner()
      let late = DocumentationOwner()

      temperature.addObserver(first) { value, _ in
        log.append("first \(value)")
        if value == 21 {
          round.block()
          temperature.value = 22
        }
      }
      round.run {
        temperature.value = 21
      } whileBlockedOnAnotherThread: {
        temperature.addObserver(late, options: [.initial, .new]) { value, option in
          let onSetter = pthread_equal(pthread_self(), setter) != 0
          log.append("late \(option) \(value) on \(onSetter ? "the setting thread" : "another")")
        }
        log.append("registration returned")
      }

      #expect(
        log.events == [
          "first 21",
          "late [.initial] 21 on another",
          "registration returned",
          "first 22",
          "late [.new] 22 on the setting thread",
        ])
      withExtendedLifetime((first, late)) {}
    }
  }

  /// "Getting started": a token-based observer ends when its token is released.
  @MainActor @Test func gettingStartedTokenEndsWhenReleased() {
    let name = Observable("Madeline")
    var log: [String] = []
    var token: ObservationToken? = name.observe(options: [.initial, .new]) { name, _ in
      log.append("User's name is \(name)")
    }
    name.value = "Amelia"
    #expect(name.observerCount == 1)
    withExtendedLifetime(token) {}
    token = nil
    name.value = "Amelia is outta here!"

    #expect(log == ["User's name is Madeline", "User's name is Amelia"])
    #expect(name.observerCount == 0)
  }

  /// "Getting started": a bag of tokens, one of them from `observeChanges`, ends with its owner.
  @MainActor @Test func gettingStartedScoreBoardObservesUntilItIsReleased() {
    let game = DocumentationGame()
    var log: [String] = []
    weak var released: DocumentationScoreBoard?
    do {
      let board = DocumentationScoreBoard(game: game) { log.append($0) }
      released = board
      game.score.value = 3
      #expect(game.score.observerCount == 2)
    }
    game.score.value = 4

    #expect(released == nil)
    #expect(log == ["score: 0", "score: 3", "0 → 3"])
    #expect(game.score.observerCount == 0)
  }

  /// "Getting started": `observe(with:)` passes the owner, held weakly, to the handler.
  @MainActor @Test func gettingStartedObserveWithPassesTheOwner() {
    let title = Observable("Inbox")
    weak var released: DocumentationTitleController?
    do {
      let controller = DocumentationTitleController()
      released = controller
      title.observe(with: controller, options: [.initial, .new]) { controller, title in
        controller.titleLabel.text = title
      }
      #expect(controller.titleLabel.text == "Inbox")
      title.value = "Archive"
      #expect(controller.titleLabel.text == "Archive")
    }
    title.value = "Drafts"

    #expect(released == nil)
    #expect(title.observerCount == 0)
  }

  /// "Coming from KVO, Combine or RxSwift": a re-entrant set never leaves a later observer on a
  /// stale value.
  @MainActor @Test func comparisonArticleReentrantSetLeavesNoObserverOnAStaleValue() {
    let count = Observable(0)
    var log: [String] = []
    let clamp = count.observe { value, _ in
      log.append("clamp sees \(value)")
      if value > 10 { count.value = 10 }
    }
    let label = count.observe { value, _ in log.append("label shows \(value)") }

    count.value = 12

    #expect(
      log == [
        "clamp sees 12",
        "label shows 12",
        "clamp sees 10",
        "label shows 10",
      ])
    #expect(count.value == 10)
    withExtendedLifetime((clamp, label)) {}
  }
}
