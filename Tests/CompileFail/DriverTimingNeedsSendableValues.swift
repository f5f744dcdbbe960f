// expected-error: type 'NonSendableBox' does not conform to the 'Sendable' protocol
// The Driver's timing operators hold a value and deliver it later on the main queue, so they are
// available only for `Sendable` values.
import PropertyObservation

final class NonSendableBox {
  var count = 0
}

func debounced(_ box: Observable<NonSendableBox>) -> Driver<NonSendableBox> {
  box.asDriver().debounce(for: .milliseconds(300))
}
