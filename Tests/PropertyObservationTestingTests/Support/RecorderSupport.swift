/// A callback-based source that is not an observable, standing in for a binding's target or a
/// Driver: it reports each value through a plain closure.
@MainActor
final class CallbackSource<Value> {
  var onValue: ((Value) -> Void)?

  func emit(_ value: Value) {
    onValue?(value)
  }
}

/// A model value that is neither `Equatable` nor `Sendable`.
final class Account {
  var owner: String

  init(owner: String) {
    self.owner = owner
  }
}
