// Top-level code after the world's declarations, for snippets that declare extensions. The
// names the pages leave undeclared are globals here.
import Dispatch
import PropertyObservation

// snippet: include World

let model = Model()
let spinner = Spinner()

// snippet: here
