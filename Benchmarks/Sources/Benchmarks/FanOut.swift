import OpenCombine
import PropertyObservation

/// Fan-out: one set delivered to `count` observers, each adding the value to its own
/// accumulator. With `oldAndNew`, every observer registers for `[.old, .new]` and gets two calls
/// per set; OpenCombine has no equivalent and sits out.
///
/// The unit is one delivered notification.
func fanOutContenders(observers count: Int, oldAndNew: Bool) -> [Contender] {
  let calls = oldAndNew ? 2 * count : count
  var contenders: [Contender] = []

  do {
    let accumulators = Accumulators(count: count)
    let closures: [(Int) -> Void] = accumulators.all.map { accumulator in
      { value in accumulator.total &+= value }
    }
    var previous = 0
    contenders.append(
      Contender(
        Column.closures, unitsPerIteration: calls, checksum: { accumulators.checksum }
      ) { iterations in
        for value in 0..<iterations {
          if oldAndNew {
            for closure in closures { closure(previous) }
          }
          for closure in closures { closure(value) }
          previous = value
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let floor = WeakOwnerFloor(0)
    let options =
      oldAndNew ? WeakOwnerFloor<Int>.old | WeakOwnerFloor<Int>.new : WeakOwnerFloor<Int>.new
    for (owner, accumulator) in zip(owners, accumulators.all) {
      floor.addObserver(owner, options: options) { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.floor, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { floor.set(value) }
      })
  }

  if !oldAndNew {
    let accumulators = Accumulators(count: count)
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellables = accumulators.all.map { accumulator in
      subject.sink { value in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.combine, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(cancellables) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { subject.send(value) }
      })
    contenders.append(appleObservationContender(observers: count))
  }

  let options: ObservableOptions = oldAndNew ? [.old, .new] : [.new]
  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      observable.addObserver(owner, options: options) { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.owner, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { observable.value = value }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let observable = Observable(0)
    let tokens = accumulators.all.map { accumulator in
      observable.observe(options: options) { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.token, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { observable.value = value }
      })
  }
  return contenders
}
