// expected-error: capture of 'box' with non-Sendable type 'Observable<NonSendableBox>'
// An `Observable` is `Sendable` only when its value is: an observable of a non-`Sendable` class
// cannot be handed to another thread, so the value cannot be set there while this one uses it.
import Dispatch
import PropertyObservation

final class NonSendableBox {
  var count = 0
}

func setFromAnotherThread() {
  let box = Observable(NonSendableBox())
  DispatchQueue.global().async {
    box.value = NonSendableBox()
  }
  box.value.count += 1
}
