import PropertyObservation

extension ObservableOptionsName {
  /// The name of the single option a callback received.
  init(_ option: ObservableOptions) {
    switch option {
    case .initial: self = .initial
    case .old: self = .old
    case .new: self = .new
    default: preconditionFailure("a callback received \(option), not a single option")
    }
  }
}
