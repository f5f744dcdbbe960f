// expected-error: mutation of captured var 'count' in concurrently-executing code
// A closure registered from nonisolated code cannot mutate a local variable of the function
// that registered it: another thread's set would run it while the function reads the variable.
import PropertyObservation

func countChanges(of score: Observable<Int>) -> Int {
  var count = 0
  let token = score.observe { _, _ in count += 1 }
  score.value = 1
  token.cancel()
  return count
}
