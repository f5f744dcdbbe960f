import OpenCombine
import PropertyObservation

/// Re-entrant sets: the first of `count` observers answers every odd value by setting the next
/// even one, so each outer set runs two rounds. The library and the floor queue the inner set and
/// deliver it after the round; OpenCombine delivers it recursively, inside the outer round.
///
/// The unit is one delivered notification.
func reentrancyContenders(observers count: Int) -> [Contender] {
  var contenders: [Contender] = []
  let calls = 2 * count

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let floor = WeakOwnerFloor(0)
    for (index, (owner, accumulator)) in zip(owners, accumulators.all).enumerated() {
      floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) {
        [unowned(unsafe) floor] value, _ in
        accumulator.total &+= value
        if index == 0 && value & 1 == 1 { floor.set(value &+ 1) }
      }
    }
    contenders.append(
      Contender(
        Column.floor, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { floor.set(2 &* value &+ 1) }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellables = accumulators.all.enumerated().map { index, accumulator in
      subject.sink { [unowned(unsafe) subject] value in
        accumulator.total &+= value
        if index == 0 && value & 1 == 1 { subject.send(value &+ 1) }
      }
    }
    contenders.append(
      Contender(
        Column.combine, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(cancellables) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { subject.send(2 &* value &+ 1) }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    for (index, (owner, accumulator)) in zip(owners, accumulators.all).enumerated() {
      observable.addObserver(owner) { [unowned(unsafe) observable] value, _ in
        accumulator.total &+= value
        if index == 0 && value & 1 == 1 { observable.value = value &+ 1 }
      }
    }
    contenders.append(
      Contender(
        Column.owner, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { observable.value = 2 &* value &+ 1 }
      })
  }

  do {
    let accumulators = Accumulators(count: count)
    let observable = Observable(0)
    let tokens = accumulators.all.enumerated().map { index, accumulator in
      observable.observe { [unowned(unsafe) observable] value, _ in
        accumulator.total &+= value
        if index == 0 && value & 1 == 1 { observable.value = value &+ 1 }
      }
    }
    contenders.append(
      Contender(
        Column.token, unitsPerIteration: calls,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations { observable.value = 2 &* value &+ 1 }
      })
  }
  return contenders
}
