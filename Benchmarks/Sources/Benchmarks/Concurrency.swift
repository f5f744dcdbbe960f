import Dispatch
import OpenCombine
import PropertyObservation

/// `threads` threads setting the same value concurrently, each `iterations` times, with `count`
/// observers. The floor holds a mutex across each round; the library lets the thread already
/// delivering run the other thread's rounds; OpenCombine serializes per subscription.
///
/// The unit is one delivered notification.
func concurrencyContenders(threads: Int = 2, observers count: Int) -> [Contender] {
  var contenders: [Contender] = []
  let calls = threads * count

  func onThreads(_ body: @escaping @Sendable (Int) -> Void) {
    guard threads > 2 else {
      DispatchQueue.concurrentPerform(iterations: threads, execute: body)
      return
    }
    // `concurrentPerform` runs no more iterations at once than there are cores; a serial queue
    // of its own gives each setter a thread.
    let group = DispatchGroup()
    for index in 0..<threads {
      DispatchQueue(label: "setter \(index)").async(group: group) { body(index) }
    }
    group.wait()
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let locked = LockedWeakOwnerFloor(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      locked.floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
        accumulator.total &+= value
      }
    }
    contenders.append(
      Contender(
        Column.lockedFloor, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        onThreads { _ in
          for value in 0..<iterations { locked.set(value) }
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellables = accumulators.all.map { accumulator in
      subject.sink { value in accumulator.total &+= value }
    }
    nonisolated(unsafe) let shared = subject
    contenders.append(
      Contender(
        Column.combine, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(cancellables) { accumulators.checksum } }
      ) { iterations in
        onThreads { _ in
          for value in 0..<iterations { shared.send(value) }
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      observable.addObserver(owner) { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.owner, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        onThreads { _ in
          for value in 0..<iterations { observable.value = value }
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let observable = Observable(0)
    let tokens = accumulators.all.map { accumulator in
      observable.observe { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.token, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } }
      ) { iterations in
        onThreads { _ in
          for value in 0..<iterations { observable.value = value }
        }
      })
  }
  return contenders
}
