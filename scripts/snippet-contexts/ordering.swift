// The ordering contract's worked example: owners `a` to `d` and a `log` function.
import PropertyObservation

final class Owner {}

let a = Owner()
let b = Owner()
let c = Owner()
let d = Owner()

func log(_ items: Any...) {
  print(items)
}

// snippet: here
