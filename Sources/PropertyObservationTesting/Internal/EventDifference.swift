/// Renders the difference between an expected and a recorded event log as text, in the style of
/// a unified diff, for ``ObservationRecorder/difference(from:)``.
enum EventDifference {
  /// Above this many cells the middle part is shown as removed-then-inserted instead of being
  /// aligned: the alignment costs time and memory proportional to the product of the lengths.
  private static let alignmentLimit = 1_000_000

  private enum Line {
    case same(ObservationRecorder.Event)
    case missing(ObservationRecorder.Event)
    case unexpected(ObservationRecorder.Event)
  }

  static func describe(
    expected: [ObservationRecorder.Event],
    recorded: [ObservationRecorder.Event]
  ) -> String? {
    guard expected != recorded else { return nil }
    let lines = align(expected, recorded)

    // Two events that print alike but differ (say `2` as an `Int` and as an `Int8`) would make a
    // baffling diff; name the value types on exactly those lines.
    var missingTexts = Set<String>()
    var unexpectedTexts = Set<String>()
    for line in lines {
      switch line {
      case .missing(let event): missingTexts.insert(event.description)
      case .unexpected(let event): unexpectedTexts.insert(event.description)
      case .same: break
      }
    }
    let ambiguous = missingTexts.intersection(unexpectedTexts)
    func text(_ event: ObservationRecorder.Event) -> String {
      let description = event.description
      guard ambiguous.contains(description) else { return description }
      return "\(description)  // value of type \(event.valueTypeName)"
    }

    var output =
      "Recorded events differ from the expected ones (- expected, + recorded): "
      + "expected \(expected.count), recorded \(recorded.count)"
    for line in lines {
      switch line {
      case .same(let event): output += "\n  \(text(event))"
      case .missing(let event): output += "\n- \(text(event))"
      case .unexpected(let event): output += "\n+ \(text(event))"
      }
    }
    return output
  }

  /// Aligns the two logs on a longest common subsequence, after trimming the common prefix and
  /// suffix, which in a failing test is usually most of the log.
  private static func align(
    _ expected: [ObservationRecorder.Event],
    _ recorded: [ObservationRecorder.Event]
  ) -> [Line] {
    var prefix = 0
    while prefix < expected.count, prefix < recorded.count, expected[prefix] == recorded[prefix] {
      prefix += 1
    }
    var suffix = 0
    while suffix < expected.count - prefix, suffix < recorded.count - prefix,
      expected[expected.count - 1 - suffix] == recorded[recorded.count - 1 - suffix]
    {
      suffix += 1
    }
    let left = Array(expected[prefix..<(expected.count - suffix)])
    let right = Array(recorded[prefix..<(recorded.count - suffix)])

    var lines = expected[..<prefix].map(Line.same)
    if left.count * right.count > alignmentLimit {
      lines += left.map(Line.missing) + right.map(Line.unexpected)
    } else {
      lines += alignMiddle(left, right)
    }
    lines += expected[(expected.count - suffix)...].map(Line.same)
    return lines
  }

  private static func alignMiddle(
    _ left: [ObservationRecorder.Event],
    _ right: [ObservationRecorder.Event]
  ) -> [Line] {
    // common[i][j] is the length of the longest common subsequence of left[i...] and right[j...].
    let width = right.count + 1
    var common = [Int](repeating: 0, count: (left.count + 1) * width)
    for i in stride(from: left.count - 1, through: 0, by: -1) {
      for j in stride(from: right.count - 1, through: 0, by: -1) {
        common[i * width + j] =
          left[i] == right[j]
          ? common[(i + 1) * width + j + 1] + 1
          : max(common[(i + 1) * width + j], common[i * width + j + 1])
      }
    }
    var lines: [Line] = []
    var i = 0
    var j = 0
    while i < left.count || j < right.count {
      if i < left.count, j < right.count, left[i] == right[j] {
        lines.append(.same(left[i]))
        i += 1
        j += 1
      } else if j == right.count
        || (i < left.count && common[(i + 1) * width + j] >= common[i * width + j + 1])
      {
        lines.append(.missing(left[i]))
        i += 1
      } else {
        lines.append(.unexpected(right[j]))
        j += 1
      }
    }
    return lines
  }
}
