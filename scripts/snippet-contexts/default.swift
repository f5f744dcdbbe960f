// The default context: the snippet is the body of a method of a `@MainActor` view controller,
// so `self` is a `ViewController`, and the names the pages leave undeclared are the method's
// parameters. The snippet sits in a `do` block, so its own declarations shadow them.
import Dispatch
import PropertyObservation

// snippet: include World

extension ViewController {
  func snippet(
    model: Model, user: User, download: Download, game: Game, player: Player, profile: Profile,
    form: Form, settings: Settings, cart: Cart, person: Person, account: Account,
    counter: Observable<Int>, reading: Observable<Double>,
    result: Observable<Result<String, DownloadError>>, api: API, query: String,
    main: ManualScheduler, start: MainScheduler.Interval, log: Log<any Sendable>,
    bag: ObservationBag, label: Label, titleLabel: Label, nameLabel: Label, scoreLabel: Label,
    progressLabel: Label, statusLabel: Label, detailLabel: Label, lengthLabel: Label,
    badge: Label, progressView: ProgressView, nameField: TextField, searchField: SearchField,
    submitButton: Button, doneButton: Button, spinner: Spinner, slider: Slider
  ) async throws {
    do {
      // snippet: here
    }
  }
}
