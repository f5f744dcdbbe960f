import PropertyObservation

/// Two sources updated together, observed through `a.combineLatest(b).map { $0 + $1 }` by one
/// token observer: two plain sets (the derived observer is called twice, once with a mix of old
/// and new) against both sets in one `withObservationTransaction` (called once, with the final
/// pair).
///
/// The unit is one update of both sources.
func transactionContenders() -> [Contender] {
  var contenders: [Contender] = []
  for transactional in [false, true] {
    let accumulator = Accumulator()
    let first = Observable(0)
    let second = Observable(0)
    let sum = first.combineLatest(second).map { pair in pair.0 &+ pair.1 }
    let token = sum.observe { value, _ in accumulator.total &+= value }
    var contender = Contender(
      transactional ? Column.transaction : Column.plainSets, unitsPerIteration: 1,
      checksum: { withExtendedLifetime(token) { accumulator.total } },
      run: { iterations in
        for value in 0..<iterations {
          if transactional {
            withObservationTransaction {
              first.value = value
              second.value = value
            }
          } else {
            first.value = value
            second.value = value
          }
        }
      })
    // The plain sets also deliver the intermediate pair.
    contender.comparable = false
    contenders.append(contender)
  }
  return contenders
}

/// How many times the derived observer is called per update of both sources, by column.
func transactionCallsPerUpdate(updates: Int) -> [String: Double] {
  var result: [String: Double] = [:]
  for transactional in [false, true] {
    // One writer at a time (the library's calls), as `Accumulator`.
    final class Calls: @unchecked Sendable { var count = 0 }
    let calls = Calls()
    let first = Observable(0)
    let second = Observable(0)
    let sum = first.combineLatest(second).map { pair in pair.0 &+ pair.1 }
    let token = sum.observe { _, _ in calls.count += 1 }
    for value in 1...updates {
      if transactional {
        withObservationTransaction {
          first.value = value
          second.value = value
        }
      } else {
        first.value = value
        second.value = value
      }
    }
    withExtendedLifetime(token) {}
    result[transactional ? Column.transaction : Column.plainSets] =
      Double(calls.count) / Double(updates)
  }
  return result
}
