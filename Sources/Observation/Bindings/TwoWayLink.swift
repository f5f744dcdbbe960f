/// The state of one two-way binding: it forwards each change of either observable to the other
/// and swallows the change that forwarding causes in return.
///
/// The loop guard counts echoes instead of comparing values, so it works for any `Value`: before
/// forwarding a value to one side, the link records that the next change it receives from that
/// side is its own echo. The core delivers each observable's changes in the order they were
/// made, so that echo is the next change of that side the link sees unless someone else set
/// that side in the meantime (concurrently, or from an observer during the round), in which case
/// the two sides still end up equal after a single extra set.
///
/// The link is the owner of both registrations and is owned by the token that
/// `bindBidirectionally(to:)` returns; it holds both observables weakly.
final class TwoWayLink<Value>: RegistrationRemoving {
  private enum Side {
    case first, second
  }

  private weak var first: Observable<Value>?
  private weak var second: Observable<Value>?
  /// Decides that `destination` already holds `value`, so forwarding would be a redundant set.
  private let isRedundant: ((_ destination: Value, _ value: Value) -> Bool)?
  private let lock = Lock()
  private var echoesFromFirst = 0  // guarded by `lock`
  private var echoesFromSecond = 0  // guarded by `lock`

  init(
    _ first: Observable<Value>,
    _ second: Observable<Value>,
    isRedundant: ((Value, Value) -> Bool)?
  ) {
    self.first = first
    self.second = second
    self.isRedundant = isRedundant
  }

  deinit {
    lock.deallocate()
  }

  /// Registers on both sides and pushes `first`'s value to `second`.
  func connect(_ first: Observable<Value>, _ second: Observable<Value>) {
    // `second` first, so that the echo of the initial push is recognised.
    second.observe(with: self) { link, value in link.forward(value, from: .second) }
    first.observe(with: self, options: [.initial, .new]) { link, value in
      link.forward(value, from: .first)
    }
  }

  func removeRegistration(identifiedBy token: AnyObject) {
    first?.removeObserver(self)
    second?.removeObserver(self)
  }

  private func forward(_ value: Value, from side: Side) {
    guard let destination = side == .first ? second : first else { return }
    let isEcho = lock.withLock {
      switch side {
      case .first where echoesFromFirst > 0:
        echoesFromFirst -= 1
        return true
      case .second where echoesFromSecond > 0:
        echoesFromSecond -= 1
        return true
      default:
        return false
      }
    }
    if isEcho { return }
    if let isRedundant, isRedundant(destination.value, value) { return }
    lock.withLock {
      switch side {
      case .first: echoesFromSecond += 1
      case .second: echoesFromFirst += 1
      }
    }
    destination.value = value
  }
}

// Every mutable property is guarded by `lock`; the weak references are only read, and a weak
// load is atomic.
extension TwoWayLink: @unchecked Sendable {}
