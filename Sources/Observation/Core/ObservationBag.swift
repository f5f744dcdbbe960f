/// A thread-safe collection of ``ObservationToken``s that ends them all at once.
///
/// Give each object one bag for the registrations it owns; they end when the object (and so
/// the bag) is deallocated, or earlier with ``removeAll()``:
///
/// ```swift
/// final class ScoreViewController {
///   private let bag = ObservationBag()
///
///   func bind(to game: Game) {
///     bag.removeAll()  // drop the previous game's registrations
///     game.score.observe { score, _ in print(score) }.store(in: bag)
///   }
/// }
/// ```
public final class ObservationBag {
  private let lock = Lock()
  @exclusivity(unchecked) private var tokens: [ObservationToken] = []

  /// Creates an empty bag.
  public init() {}

  deinit {
    lock.deallocate()
  }

  /// Adds `token` to the bag, which keeps it until ``removeAll()`` or until the bag is released.
  ///
  /// - Parameter token: The token to keep.
  public func insert(_ token: ObservationToken) {
    lock.withLock { tokens.append(token) }
  }

  /// Cancels and releases every token in the bag.
  ///
  /// The tokens are cancelled after the bag's lock is released, in insertion order, so a token
  /// whose registration runs user code on removal cannot deadlock the bag.
  public func removeAll() {
    let removed = lock.withLock {
      defer { tokens = [] }
      return tokens
    }
    for token in removed { token.cancel() }
  }

  /// The number of tokens in the bag.
  public var count: Int {
    lock.withLock { tokens.count }
  }

  /// Whether the bag holds no token.
  public var isEmpty: Bool {
    lock.withLock { tokens.isEmpty }
  }
}

// `tokens` is guarded by `lock`.
extension ObservationBag: @unchecked Sendable {}
