/// One upstream change of a `combineLatest`: which source changed, and its value.
enum CombineEvent<First, Second, Third> {
  case first(First)
  case second(Second)
  case third(Third)
}

/// The latest value of each source of a `combineLatest`. Only the pipeline's drainer touches it,
/// so it needs no lock of its own (see ``DerivedPipeline``).
final class LatestValues<First, Second, Third> {
  private var first: First?
  private var second: Second?
  private var third: Third?

  /// - Parameter third: A value for the third slot when only two sources are combined.
  init(third: Third? = nil) {
    self.third = third
  }

  /// Records `event`; returns whether every source has a value now.
  func record(_ event: CombineEvent<First, Second, Third>) -> Bool {
    switch event {
    case .first(let value): first = value
    case .second(let value): second = value
    case .third(let value): third = value
    }
    return first != nil && second != nil && third != nil
  }

  /// The latest value of each source, once ``record(_:)`` has returned `true`.
  var combination: (First, Second, Third) {
    guard let first, let second, let third else {
      preconditionFailure("combineLatest read a source with no value")
    }
    return (first, second, third)
  }
}
