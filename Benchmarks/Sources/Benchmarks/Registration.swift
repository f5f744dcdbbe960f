import OpenCombine
import PropertyObservation

/// Registering `count` observers one by one, then releasing them all and setting once, in
/// nanoseconds per observer for each phase, median of `repetitions` interleaved runs.
///
/// Release means dropping the owners (weak-owner designs) or the tokens and cancellables, in
/// registration order, then one set, which is when the weak-owner designs prune their dead
/// entries. The owner objects are created before the clock starts.
func registrationCosts(count: Int, repetitions: Int) -> (
  register: [String: Double], release: [String: Double]
) {
  var registering: [String: [Double]] = [:]
  var releasing: [String: [Double]] = [:]
  let accumulator = Accumulator()

  func record(_ column: String, _ start: UInt64, _ registered: UInt64, _ end: UInt64) {
    registering[column, default: []].append(Double(registered - start) / Double(count))
    releasing[column, default: []].append(Double(end - registered) / Double(count))
  }

  for _ in 0..<repetitions {
    do {
      var owners = (0..<count).map { _ in Owner() }
      let floor = WeakOwnerFloor(0)
      let start = now()
      for owner in owners {
        floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
          accumulator.total &+= value
        }
      }
      let registered = now()
      owners.removeAll()
      floor.set(1)
      record(Column.floor, start, registered, now())
    }
    do {
      let subject = CurrentValueSubject<Int, Never>(0)
      var cancellables: [AnyCancellable] = []
      cancellables.reserveCapacity(count)
      let start = now()
      for _ in 0..<count {
        cancellables.append(subject.sink { value in accumulator.total &+= value })
      }
      let registered = now()
      cancellables.removeAll()
      subject.send(1)
      record(Column.combine, start, registered, now())
    }
    for replacing in [true, false] {
      var owners = (0..<count).map { _ in Owner() }
      let observable = Observable(0)
      let start = now()
      for owner in owners {
        observable.addObserver(owner, removeIfExists: replacing) { value, _ in
          accumulator.total &+= value
        }
      }
      let registered = now()
      owners.removeAll()
      observable.value = 1
      record(replacing ? Column.owner : Column.ownerBeside, start, registered, now())
    }
    do {
      let observable = Observable(0)
      var tokens: [ObservationToken] = []
      tokens.reserveCapacity(count)
      let start = now()
      for _ in 0..<count {
        tokens.append(observable.observe { value, _ in accumulator.total &+= value })
      }
      let registered = now()
      tokens.removeAll()
      observable.value = 1
      record(Column.token, start, registered, now())
    }
  }
  consume(accumulator.total)
  return (registering.mapValues(median), releasing.mapValues(median))
}
