import OpenCombine
import PropertyObservation

/// Churn: with `permanent` observers in place, register one more (a new owner object for the
/// weak-owner columns, a token or cancellable otherwise), set once, and drop it.
///
/// The unit is one add-set-drop cycle. A dropped owner's entry is pruned by the next set, as in
/// an app where views come and go; a dropped token or cancellable removes its entry at once.
func churnContenders(permanent count: Int) -> [Contender] {
  var contenders: [Contender] = []

  do {
    let accumulators = Accumulators(count: count + 1)
    let churner = accumulators.all[count]
    var closures: [(Int) -> Void] = accumulators.all.prefix(count).map { accumulator in
      { value in accumulator.total &+= value }
    }
    contenders.append(
      Contender(Column.closures, unitsPerIteration: 1, checksum: { accumulators.checksum }) {
        iterations in
        for value in 0..<iterations {
          closures.append { value in churner.total &+= value }
          for closure in closures { closure(value) }
          closures.removeLast()
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count + 1)
    let churner = accumulators.all[count]
    let owners = (0..<count).map { _ in Owner() }
    let floor = WeakOwnerFloor(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
        accumulator.total &+= value
      }
    }
    contenders.append(
      Contender(
        Column.floor, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations {
          let owner = Owner()
          floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
            churner.total &+= value
          }
          floor.set(value)
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count + 1)
    let churner = accumulators.all[count]
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellables = accumulators.all.prefix(count).map { accumulator in
      subject.sink { value in accumulator.total &+= value }
    }
    var contender = Contender(
      Column.combine, unitsPerIteration: 1,
      checksum: { withExtendedLifetime(cancellables) { accumulators.checksum } },
      run: { iterations in
        for value in 0..<iterations {
          let cancellable = subject.sink { value in churner.total &+= value }
          subject.send(value)
          cancellable.cancel()
        }
      })
    // A new sink also receives the current value when it subscribes.
    contender.comparable = false
    contenders.append(contender)
  }

  do {
    let accumulators = Accumulators(count: count + 1)
    let churner = accumulators.all[count]
    let owners = (0..<count).map { _ in Owner() }
    let observable = Observable(0)
    for (owner, accumulator) in zip(owners, accumulators.all) {
      observable.addObserver(owner) { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.owner, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(owners) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations {
          let owner = Owner()
          observable.addObserver(owner) { value, _ in churner.total &+= value }
          observable.value = value
        }
      })
  }

  do {
    let accumulators = Accumulators(count: count + 1)
    let churner = accumulators.all[count]
    let observable = Observable(0)
    let tokens = accumulators.all.prefix(count).map { accumulator in
      observable.observe { value, _ in accumulator.total &+= value }
    }
    contenders.append(
      Contender(
        Column.token, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(tokens) { accumulators.checksum } }
      ) { iterations in
        for value in 0..<iterations {
          let token = observable.observe { value, _ in churner.total &+= value }
          observable.value = value
          token.cancel()
        }
      })
  }
  return contenders
}
