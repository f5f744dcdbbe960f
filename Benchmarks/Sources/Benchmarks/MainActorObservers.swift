import Dispatch
import PropertyObservation

/// Runs `body` on the main queue, which the main thread runs (`dispatchMain()`), and waits for
/// it: the way a workload on the benchmark thread gets main-actor code to run.
func onMainQueue<Result>(_ body: @MainActor () -> Result) -> Result {
  nonisolated(unsafe) var result: Result?
  DispatchQueue.main.sync {
    MainActor.assumeIsolated { result = body() }
  }
  return result!
}

/// Fan-out on the main thread: `count` observers, every value set on the main queue, registered
/// either from `@MainActor` code (the callback is main-actor isolated and, since the round runs
/// on the main queue, called synchronously inside it) or from nonisolated code with a
/// `@Sendable` closure (called on the delivering thread, here the main thread too).
///
/// Each timed sample is one `DispatchQueue.main.sync` from the benchmark thread around its sets,
/// in every column alike. The unit is one delivered notification.
func mainThreadContenders(observers count: Int) -> [Contender] {
  var contenders: [Contender] = []

  func setOnMain(_ observable: Observable<Int>) -> (Int) -> Void {
    { iterations in
      onMainQueue {
        for value in 0..<iterations { observable.value = value }
      }
    }
  }

  do {
    let accumulators = Accumulators(count: count)
    let observable = Observable(0)
    var tokens: [ObservationToken] = []
    for accumulator in accumulators.all {
      tokens.append(observable.observe { @Sendable value, _ in accumulator.total &+= value })
    }
    contenders.append(
      Contender(
        Column.nonisolatedToken, unitsPerIteration: count,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } },
        run: setOnMain(observable)))
  }

  do {
    let accumulators = Accumulators(count: count)
    let observable = Observable(0)
    let shared = accumulators
    let tokens = onMainQueue { registerTokens(on: observable, shared) }
    contenders.append(
      Contender(
        Column.mainActorObserve, unitsPerIteration: count,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } },
        run: setOnMain(observable)))
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      observable.addObserver(owner) { @Sendable value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.nonisolatedOwner, unitsPerIteration: count,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } },
        run: setOnMain(observable)))
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    nonisolated(unsafe) let shared = (owners, accumulators)
    onMainQueue { registerOwners(on: observable, shared.0, shared.1) }
    contenders.append(
      Contender(
        Column.mainActorOwner, unitsPerIteration: count,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } },
        run: setOnMain(observable)))
  }
  return contenders
}

/// Token registrations made from the main actor: their callbacks are main-actor isolated.
@MainActor
private func registerTokens(
  on observable: Observable<Int>, _ accumulators: Accumulators
) -> [ObservationToken] {
  var tokens: [ObservationToken] = []
  for accumulator in accumulators.all {
    tokens.append(observable.observe { value, _ in accumulator.total &+= value })
  }
  return tokens
}

/// Owner registrations made from the main actor: their callbacks are main-actor isolated.
@MainActor
private func registerOwners(
  on observable: Observable<Int>, _ owners: [Owner], _ accumulators: Accumulators
) {
  for (owner, accumulator) in zip(owners, accumulators.all) {
    observable.addObserver(owner) { value, _ in accumulator.total &+= value }
  }
}

/// Counts the main-queue turns in which a main-actor callback ran, for observers whose lane is
/// internal: the first call of a turn enqueues a block that marks the turn over; that block runs
/// after the turn and before the lane's next turn (a lane schedules its next turn at the end of
/// the current one, after the block), so the next call counts a new turn.
final class MainQueueTurns: @unchecked Sendable {
  // Touched only on the main queue, then read after the main queue was drained.
  private(set) var count = 0
  private var isInTurn = false

  @MainActor
  func enter() {
    guard !isInTurn else { return }
    isInTurn = true
    count += 1
    DispatchQueue.main.async { MainActor.assumeIsolated { self.isInTurn = false } }
  }
}

/// A token observer registered from the main actor that counts its turns and values; the
/// main-queue row's column for background sets delivered to main-actor observers.
@MainActor
func observeOnMainActor(
  _ source: Observable<Int>, _ counter: MainQueueCounter, _ turns: MainQueueTurns
) -> ObservationToken {
  source.observe { value, _ in
    turns.enter()
    counter.receive(value)
  }
}

/// The same with `addObserver` and an owner.
@MainActor
func addObserverOnMainActor(
  _ source: Observable<Int>, _ owner: Owner, _ counter: MainQueueCounter, _ turns: MainQueueTurns
) {
  source.addObserver(owner) { value, _ in
    turns.enter()
    counter.receive(value)
  }
}
