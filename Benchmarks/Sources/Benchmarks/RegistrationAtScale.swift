import PropertyObservation

/// The operations of the registration-at-scale table, one row each.
enum ScaleOperation {
  static let floorRegister = "register: weak-owner floor"
  static let ownerRegister = "register: addObserver (default, removeIfExists: true)"
  static let ownerBesideRegister = "register: addObserver, removeIfExists: false"
  static let tokenRegister = "register: observe (token)"
  static let removeObserver = "removeObserver(owner), sampled, random order"
  static let cancel = "token cancel(), sampled, random order"
  static let hashMapRegister = "register: Dictionary keyed by owner (hash-map floor)"
  static let hashMapRemove = "removeValue(owner): Dictionary keyed by owner, sampled, random order"

  static let all = [
    floorRegister, ownerRegister, ownerBesideRegister, tokenRegister, removeObserver, cancel,
    hashMapRegister, hashMapRemove,
  ]
}

/// Registration at scale: with `count` registrations on one observable, the time of one
/// operation, in nanoseconds, median of up to `repetitions` runs (fewer when they take long:
/// no new run starts after `budget` seconds).
///
/// Registrations (the floor, `addObserver` with the default `removeIfExists: true` and with
/// `false`, tokens) are timed over building the whole list of `count`, as an app registering
/// `count` owners does. Removals are timed over `sampled` of them: `removeObserver` and
/// `cancel()` remove `sampled` registrations in a random order (the same seeded order in every
/// run) from a list of `count`. Sampling keeps a quadratic design from taking hours at 100 000
/// while measuring the same thing: one operation on a list of `count`.
///
/// Every design gets fresh owners, created before the clock starts (the first weak reference to
/// an object allocates its side table, part of each weak-owner design's registration cost).
///
/// The hash-map floor is the simplest O(1) design for removal by owner: a `Dictionary` from the
/// owner's identity to the floor's entry, specialized for this module, with no lock and no
/// ordering. It is not a target; its 100 000 / 10 000 ratio shows what the machine's caches do
/// to one random access per operation once the working set outgrows them.
func registrationAtScale(
  count: Int, sampled: Int, repetitions: Int, budget: Double
) -> [String: Double] {
  var samples: [String: [Double]] = [:]
  let accumulator = Accumulator()
  var generator = SplitMix64(seed: 13)
  let removed = Array(Array(0..<count).shuffled(using: &generator).prefix(sampled))
  let started = now()

  func record(_ operation: String, since start: UInt64, operations: Int) {
    samples[operation, default: []].append(Double(now() - start) / Double(operations))
  }

  for repetition in 0..<repetitions {
    if repetition > 0 && Double(now() - started) / 1e9 > budget { break }
    do {
      let owners = (0..<count).map { _ in Owner() }
      let floor = WeakOwnerFloor(0)
      let start = now()
      for owner in owners {
        floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
          accumulator.total &+= value
        }
      }
      record(ScaleOperation.floorRegister, since: start, operations: count)
      floor.set(1)
      withExtendedLifetime(owners) {}
    }
    do {
      let owners = (0..<count).map { _ in Owner() }
      let observable = Observable(0)
      var start = now()
      for owner in owners {
        observable.addObserver(owner) { value, _ in accumulator.total &+= value }
      }
      record(ScaleOperation.ownerRegister, since: start, operations: count)
      observable.value = 1
      start = now()
      for index in removed { observable.removeObserver(owners[index]) }
      record(ScaleOperation.removeObserver, since: start, operations: sampled)
      let left = withExtendedLifetime(owners) { observable.observerCount }
      if left != count - sampled {
        failures.append(
          "registration at scale: \(left) left after removing \(sampled) "
            + "of \(count)")
      }
    }
    do {
      let owners = (0..<count).map { _ in Owner() }
      let observable = Observable(0)
      let start = now()
      for owner in owners {
        observable.addObserver(owner, removeIfExists: false) { value, _ in
          accumulator.total &+= value
        }
      }
      record(ScaleOperation.ownerBesideRegister, since: start, operations: count)
      observable.value = 1
      withExtendedLifetime(owners) {}
    }
    do {
      let observable = Observable(0)
      var tokens: [ObservationToken] = []
      tokens.reserveCapacity(count)
      var start = now()
      for _ in 0..<count {
        tokens.append(observable.observe { value, _ in accumulator.total &+= value })
      }
      record(ScaleOperation.tokenRegister, since: start, operations: count)
      observable.value = 1
      start = now()
      for index in removed { tokens[index].cancel() }
      record(ScaleOperation.cancel, since: start, operations: sampled)
      let left = withExtendedLifetime(tokens) { observable.observerCount }
      if left != count - sampled {
        failures.append(
          "registration at scale: \(left) left after cancelling \(sampled) "
            + "of \(count)")
      }
    }
    // Last in each repetition: a table this size reshapes the heap the rows above would meet.
    do {
      let owners = (0..<count).map { _ in Owner() }
      var table: [ObjectIdentifier: WeakOwnerFloor<Int>.Entry] = [:]
      var start = now()
      for owner in owners {
        table[ObjectIdentifier(owner)] = WeakOwnerFloor<Int>.Entry(
          owner: owner, options: WeakOwnerFloor<Int>.new
        ) { value, _ in accumulator.total &+= value }
      }
      record(ScaleOperation.hashMapRegister, since: start, operations: count)
      start = now()
      for index in removed { table.removeValue(forKey: ObjectIdentifier(owners[index])) }
      record(ScaleOperation.hashMapRemove, since: start, operations: sampled)
      if table.count != count - sampled {
        failures.append(
          "registration at scale: the hash-map floor kept \(table.count) of \(count) "
            + "after removing \(sampled)")
      }
      withExtendedLifetime(owners) {}
    }
  }
  consume(accumulator.total)
  return samples.mapValues(median)
}

/// A small seeded generator (SplitMix64), so that every run removes in the same order.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }
}

/// For `--profile register COLUMN N`: registering N fresh owners on one observable, one column
/// per way of registering (`weak-owner floor`, `addObserver`, `addObserver, removeIfExists:
/// false`, `observe (token)`). The owners are created inside the run, as in no timed row: for a
/// profiler only.
func registrationContenders() -> [Contender] {
  let accumulator = Accumulator()
  var tokens: [ObservationToken] = []
  func contender(_ column: String, _ register: @escaping (Owner) -> Void) -> Contender {
    Contender(column, unitsPerIteration: 1) { iterations in
      let owners = (0..<iterations).map { _ in Owner() }
      for owner in owners { register(owner) }
      withExtendedLifetime(owners) {}
    }
  }
  let floor = WeakOwnerFloor(0)
  let observable = Observable(0)
  return [
    contender(Column.floor) { owner in
      floor.addObserver(owner, options: WeakOwnerFloor<Int>.new) { value, _ in
        accumulator.total &+= value
      }
    },
    contender(Column.owner) { owner in
      observable.addObserver(owner) { value, _ in accumulator.total &+= value }
    },
    contender(Column.ownerBeside) { owner in
      observable.addObserver(owner, removeIfExists: false) { value, _ in
        accumulator.total &+= value
      }
    },
    contender(Column.token) { _ in
      tokens.append(observable.observe { value, _ in accumulator.total &+= value })
    },
  ]
}
