// expected: compiles
// An actor registers closures and its own methods: they run on the actor and may touch its
// state.
import PropertyObservation

actor ScoreBoard {
  var best = 0
  var seen = 0
  var token: ObservationToken?

  func follow(_ score: Observable<Int>) {
    token = score.observe(options: [.initial, .new]) { value, _ in
      self.best = max(self.best, value)
    }
    score.addObserver(self, closure: count)
  }

  func count(_: Int, _: ObservableOptions) {
    seen += 1
  }
}
