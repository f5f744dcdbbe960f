import MallocCounter
import Observation
import PropertyObservation

/// What an observable property costs before and after anybody observes it: live heap bytes
/// (malloc's usable sizes) and creation time per property, for rows of five properties, the
/// shape of a list screen's models.
struct Footprint {
  var bytes: Double
  var nanoseconds: Double
}

/// A model row of five plain stored properties: the floor.
private final class PlainRow {
  var a = 0
  var b = 0
  var c = 0
  var d = 0
  var e = 0
}

/// The same row with Apple's `@Observable` macro.
@Observable
private final class AppleRow {
  var a = 0
  var b = 0
  var c = 0
  var d = 0
  var e = 0
}

/// The tutorial's box: a value and a list of listeners, no lock, no weak owners.
private final class TutorialBox<Value> {
  var value: Value
  var listeners: [(Value) -> Void] = []

  init(_ value: Value) {
    self.value = value
  }
}

private final class TutorialRow {
  let a = TutorialBox(0)
  let b = TutorialBox(0)
  let c = TutorialBox(0)
  let d = TutorialBox(0)
  let e = TutorialBox(0)
}

private final class ObservableRow {
  let a = Observable(0)
  let b = Observable(0)
  let c = Observable(0)
  let d = Observable(0)
  let e = Observable(0)

  var all: [Observable<Int>] { [a, b, c, d, e] }
}

/// A row and the tokens of its registrations, kept together as a list screen's model would
/// keep them. (An array cast to `AnyObject` would measure Foundation's bridging instead: on
/// Linux it becomes an `NSArray` of boxed values.)
private final class ObservedRow {
  let row: ObservableRow
  let tokens: [ObservationToken]

  init(_ row: ObservableRow, _ tokens: [ObservationToken]) {
    self.row = row
    self.tokens = tokens
  }
}

/// Measures `make` called `count` times: the live heap bytes it leaves and the time it takes,
/// per `unitsPerCall` (the properties or levels each call makes). What it returns is kept alive
/// until the measurement ends.
private func measureFootprint(
  count: Int, unitsPerCall: Int, _ make: () -> AnyObject
) -> Footprint {
  var kept: [AnyObject] = []
  kept.reserveCapacity(count)
  let bytesBefore = mc_live_bytes()
  let start = now()
  for _ in 0..<count { kept.append(make()) }
  let elapsed = now() - start
  let bytesAfter = mc_live_bytes()
  // The array of kept objects is not part of the footprint: its buffer is reserved before the
  // first count, so appending allocates nothing, and nothing is subtracted for it.
  let units = Double(count * unitsPerCall)
  let result = Footprint(
    bytes: Double(bytesAfter - bytesBefore) / units,
    nanoseconds: Double(elapsed) / units)
  withExtendedLifetime(kept) {}
  return result
}

/// The labels of the footprint rows the targets compare.
enum FootprintRow {
  static let tutorialBox = "Tutorial box (value + listener array)"
  static let idle = "`Observable`, nobody observing"
  static let mapLevel = "`map` level of a chain"
}

/// The rows of the footprint table, each measured over `rows` model rows of five properties (or
/// `rows` levels of a `map` chain), median of `repetitions` runs.
func footprintTable(
  rows: Int, repetitions: Int, only: String? = nil
) -> [(label: String, footprint: Footprint)] {
  let accumulator = Accumulator()
  let cases: [(String, Int, () -> AnyObject)] = [
    ("Plain stored property", 5, { PlainRow() }),
    ("Apple's `@Observable` class", 5, { AppleRow() }),
    (FootprintRow.tutorialBox, 5, { TutorialRow() }),
    (FootprintRow.idle, 5, { ObservableRow() }),
    (
      "`Observable`, one token", 5,
      {
        let row = ObservableRow()
        let tokens = row.all.map { $0.observe { value, _ in accumulator.total &+= value } }
        return ObservedRow(row, tokens)
      }
    ),
    (
      "`Observable`, ten tokens", 5,
      {
        let row = ObservableRow()
        var tokens: [ObservationToken] = []
        tokens.reserveCapacity(50)
        for observable in row.all {
          for _ in 0..<10 {
            tokens.append(observable.observe { value, _ in accumulator.total &+= value })
          }
        }
        return ObservedRow(row, tokens)
      }
    ),
  ]
  var result: [(String, Footprint)] = []
  for (label, units, make) in cases where only.map(label.contains) ?? true {
    var samples: [Footprint] = []
    for _ in 0..<repetitions {
      samples.append(measureFootprint(count: rows, unitsPerCall: units, make))
    }
    result.append((label, median(samples)))
  }
  // One level of a `map` chain: each level maps the one before, as a deep derived graph does.
  guard only.map(FootprintRow.mapLevel.contains) ?? true else { return result }
  var levels: [Footprint] = []
  for _ in 0..<repetitions {
    let source = Observable(0)
    var last: ReadOnlyObservable<Int> = source
    levels.append(
      measureFootprint(count: rows, unitsPerCall: 1) {
        last = last.map { $0 &+ 1 }
        return last
      })
    withExtendedLifetime(source) {}
  }
  result.append((FootprintRow.mapLevel, median(levels)))
  return result
}

private func median(_ samples: [Footprint]) -> Footprint {
  let bytes = samples.map(\.bytes).sorted()
  let times = samples.map(\.nanoseconds).sorted()
  return Footprint(bytes: bytes[bytes.count / 2], nanoseconds: times[times.count / 2])
}
