import MallocCounter
import OpenCombine
import PropertyObservation

/// Heap allocations per set in steady state: after a warm-up, the allocations made by `sets`
/// sets on a prepared fan-out, divided by `sets`. Counted by the malloc interposer in the
/// `MallocCounter` target (thread-local counters, all sets run on this thread).
func allocationsPerSet(_ contenders: [Contender], sets: Int) -> [String: Double] {
  var result: [String: Double] = [:]
  for contender in contenders {
    contender.run(10)
    let before = mc_allocations()
    contender.run(sets)
    result[contender.column] = Double(mc_allocations() - before) / Double(sets)
  }
  return result
}

/// Heap bytes per registered observer: the live heap bytes (malloc's usable sizes) that
/// registering `count` observers adds, divided by `count`. The owners and the accumulator exist
/// before the count starts, so only what the observation machinery allocates is counted: entries,
/// closure contexts, tokens, subscriptions, and the growth slack of the containers.
func bytesPerObserver(count: Int) -> [String: Double] {
  let accumulator = Accumulator()
  var result: [String: Double] = [:]

  // Fresh owners for each column: the first weak reference to an object allocates its side
  // table, which belongs to the weak-owner designs' cost and must be counted for each of them.
  func measureBytes(_ column: String, _ register: ([Owner]) -> AnyObject) {
    let owners = (0..<count).map { _ in Owner() }
    let start = now()
    let before = mc_live_bytes()
    let registrations = register(owners)
    let after = mc_live_bytes()
    progress("bytes, \(column): \(format(Double(now() - start) / 1e9, fractionDigits: 2)) s")
    result[column] = Double(after - before) / Double(count)
    // Kept until the process exits: releasing 100 000 tokens or cancellables one by one is
    // quadratic in some designs (see the registration table) and is not what this row measures.
    keptAlive.append((owners, registrations))
  }

  measureBytes(Column.closures) { _ in
    var closures: [(Int) -> Void] = []
    for _ in 0..<count { closures.append { value in accumulator.total &+= value } }
    return Kept(closures)
  }
  measureBytes(Column.floor) { owners in
    let floor = WeakOwnerFloor(0)
    for owner in owners {
      floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
        accumulator.total &+= value
      }
    }
    return floor
  }
  measureBytes(Column.combine) { _ in
    let subject = CurrentValueSubject<Int, Never>(0)
    var cancellables: [AnyCancellable] = []
    for _ in 0..<count {
      cancellables.append(subject.sink { value in accumulator.total &+= value })
    }
    return Kept((subject, cancellables))
  }
  measureBytes(Column.owner) { owners in
    let observable = Observable(0)
    for owner in owners {
      // Not replacing: the default scans the list for the owner's earlier registrations, which
      // makes building a list of 100 000 quadratic (see the registration table); the bytes are
      // the same.
      observable.addObserver(owner, removeIfExists: false) { value, _ in
        accumulator.total &+= value
      }
    }
    return observable
  }
  measureBytes(Column.token) { _ in
    let observable = Observable(0)
    var tokens: [ObservationToken] = []
    for _ in 0..<count {
      tokens.append(observable.observe { value, _ in accumulator.total &+= value })
    }
    return Kept((observable, tokens))
  }
  consume(accumulator.total)
  return result
}

nonisolated(unsafe) private var keptAlive: [Any] = []

/// What a column registered, kept in a small class of its own. (An array cast to `AnyObject`
/// would measure Foundation's bridging as well: on Linux it becomes an `NSArray` whose elements
/// are boxed one by one, a box per token or cancellable.)
private final class Kept<Registrations> {
  let registrations: Registrations

  init(_ registrations: Registrations) {
    self.registrations = registrations
  }
}
