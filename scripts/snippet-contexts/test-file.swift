// A test file of Swift Testing: the snippet declares `@Test` functions. `model` and `driver` are
// the globals of the recorder's `waitForEvents` example.
// snippet: parse-as-library
import Dispatch
import PropertyObservation
import PropertyObservationTesting
import Testing

let model = Observable(1)
let driver = model.asDriver()

// snippet: here
