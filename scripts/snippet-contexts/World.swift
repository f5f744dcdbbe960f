// The world the documentation's fragments take for granted: the models, views and helpers a page
// mentions without declaring them. Included by the contexts; not a context itself. Views are
// `@MainActor` classes, as UIKit's are and as the tutorial's `Label` is; models hold `let` observables unless a page uses
// `@Observed`. Add a member here when a new snippet uses one, in the shape the page implies.

// MARK: - Views

@MainActor final class Label {
  var text: String?
  var isHidden = false
  var isEnabled = true
  var onTextChange: (@Sendable (String) -> Void)?
}

@MainActor final class ProgressView {
  var fraction = 0.0
  var progress = 0.0
}

@MainActor final class Button {
  var isEnabled = true
}

@MainActor final class Spinner {
  var isAnimating = false
  var isHidden = false
}

@MainActor final class TextField {
  let text = Observable("")
}

@MainActor final class SearchField {
  let text = Observable("")
}

@MainActor final class Slider {
  let value = Observable(0.5)
  @MainActor func animate(to position: Double) async {}
}

@MainActor final class TitleView {
  var onTextChange: (@Sendable (String) -> Void)?
}

// MARK: - Models

final class User {
  let name = Observable("Madeline")
  let age = Observable(30)
  let currency = Observable("EUR")
  @Observed var unreadCount = 0
}

final class Model {
  let name = Observable("")
  let title = Observable("")
  let status = Observable("")
  let score = Observable(0)
  let count = Observable(0)
  let isLoading = Observable(false)
}

struct DownloadError: Error {}

final class Download {
  let title = Observable("")
  let progress = Observable(0.0)
  let isFinished = Observable(false)
  let result = Observable<Result<String, DownloadError>>(.success(""))
}

final class Game {
  let score = Observable(0)
}

final class Player {
  @Observed var name = "Ray"
  @Observed var score = 0
  let position = Observable(0.0)
}

final class Profile {
  let name = Observable("")
}

final class Form {
  let name = Observable("")
  let acceptsTerms = Observable(false)
}

final class Settings {
  let volume = Observable(0.5)
}

final class Cart {
  let count = Observable(0)
  let total = Observable(0.0)
}

final class Person {
  let age = Observable(0)
}

final class Account {
  let balance = Observable(0)
}

struct Member: Equatable, Sendable {
  var name: String
}

final class Session {
  let user = Observable<Member?>(nil)
}

final class ProfileViewModel {
  init(_ user: User) {}
}

final class Catalog {
  func titles(matching query: String) -> [String] { [query] }
}

struct API: Sendable {
  func summary(for query: String) async throws -> String { query }
}

/// "A class that appends under a lock."
final class Log<Element: Sendable>: @unchecked Sendable {
  // `stored` is only touched on `queue`.
  private let queue = DispatchQueue(label: "Log")
  private var stored: [Element] = []

  func append(_ element: Element) { queue.sync { stored.append(element) } }
  var values: [Element] { queue.sync { stored } }
}

// MARK: - The `self` of fragments written inside a view controller

@MainActor final class ViewController {
  var title = ""
  var accessibilityValue: String?
  let titleLabel = Label()
  let countLabel = Label()
  let resultsLabel = Label()
  let progressView = ProgressView()
  let catalog = Catalog()
}
