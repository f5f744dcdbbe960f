// expected: compiles
// Top-level code (a script, a tutorial's main.swift) runs on the main actor: its closures may
// mutate its variables.
import PropertyObservation

let name = Observable("Ray")
var history: [String] = []
let token = name.observe(options: [.initial, .new]) { value, _ in history.append(value) }
name.value = "Jane"
print(history)
token.cancel()
