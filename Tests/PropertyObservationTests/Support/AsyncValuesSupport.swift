/// A value that is not `Sendable`, to check that iterating values of such a type compiles and
/// works on the main actor.
final class NonSendableBox {
  var number: Int

  init(_ number: Int) {
    self.number = number
  }
}
