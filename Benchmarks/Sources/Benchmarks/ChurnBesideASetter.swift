import Dispatch
import PropertyObservation

/// Issue 33: one thread sets `a` `sets` times, where `m = a.map { $0 * 10 }` feeds a diamond
/// `a.combineLatest(m)` that has one observer, while another thread registers with `.initial`
/// and cancels, in a loop, until the sets are done: on `m` (`onDerived`, the scenario)
/// or on `a` itself (the same churn on a plain observable). Returns the setter's nanoseconds per
/// set and the pairs the churning thread made.
///
/// A constant cost per set from 10 000 to 100 000 sets shows that cancelled registrations do
/// not pile up; the cost with churn on `m` within 2× the cost with churn on `a` shows that churn
/// on a derived value inside a diamond costs the setter no more than churn on a plain
/// observable.
func churnBesideASetter(sets: Int, onDerived: Bool) -> (nanosecondsPerSet: Double, pairs: Int) {
  let source = Observable(0)
  let tens = source.map { $0 * 10 }
  let target: ReadOnlyObservable<Int> = onDerived ? tens : source
  let pairs = source.combineLatest(tens)
  let last = Counter()
  let token = pairs.observe { @Sendable pair, _ in last.set(pair.1) }
  let done = Flag()
  let churned = Counter()
  let group = DispatchGroup()
  DispatchQueue(label: "churner").async(group: group) {
    var count = 0
    while !done.isSet {
      let registration = target.observe(options: [.initial, .new]) { @Sendable _, _ in }
      registration.cancel()
      count += 1
    }
    churned.set(count)
  }
  let elapsed = Counter()
  DispatchQueue(label: "setter").async(group: group) {
    let start = now()
    for value in 1...sets { source.value = value }
    elapsed.set(Int(now() - start))
    done.set()
  }
  group.wait()
  withExtendedLifetime(token) {}
  precondition(pairs.value == (sets, sets * 10), "the diamond missed a change")
  return (Double(elapsed.value) / Double(sets), churned.value)
}

/// A flag one thread sets and another polls.
private final class Flag: @unchecked Sendable {
  private let lock = SmallLock()
  private var storage = false
  var isSet: Bool { lock.withLock { storage } }
  func set() { lock.withLock { storage = true } }
}

/// A count one thread publishes for another.
private final class Counter: @unchecked Sendable {
  private let lock = SmallLock()
  private var storage = 0
  var value: Int { lock.withLock { storage } }
  func set(_ value: Int) { lock.withLock { storage = value } }
}
