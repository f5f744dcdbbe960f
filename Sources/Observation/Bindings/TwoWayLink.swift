/// The state of one two-way binding: it forwards each change of either observable to the other,
/// through its conversions (the identity for `bindBidirectionally(to:)`; a backward conversion
/// may reject a value, which is then not written), and swallows the change that forwarding
/// causes in return.
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
///
/// Its target is the second observable's `value`: binding that observable two ways again, from
/// any model, ends this link first (see `BindingRegistry`), so a reused form cell bound to a new
/// model no longer writes the new model's value into the old one. A one-way `bind(to:)` into
/// that observable is a binding of another kind and leaves this link in place.
final class TwoWayLink<First, Second>: RegistrationRemoving {
  private enum Side {
    case first, second
  }

  private weak var first: Observable<First>?
  private weak var second: Observable<Second>?
  private let forward: (First) -> Second
  private let backward: (Second) -> First?
  /// When given, a value equal to what the destination already holds is not written (the
  /// `Equatable` form of `bindBidirectionally(to:)`).
  private let isRedundantForward: ((Second, Second) -> Bool)?
  private let isRedundantBackward: ((First, First) -> Bool)?
  private let lock = Lock()
  private var echoesFromFirst = 0  // guarded by `lock`
  private var echoesFromSecond = 0  // guarded by `lock`
  /// Set by `unbind()`: a link replaced by another thread before `connect` registered removes
  /// its registrations itself.
  private var isEnded = false  // guarded by `lock`
  let key: BindingKey

  init(
    _ first: Observable<First>,
    _ second: Observable<Second>,
    forward: @escaping (First) -> Second,
    backward: @escaping (Second) -> First?,
    isRedundantForward: ((Second, Second) -> Bool)? = nil,
    isRedundantBackward: ((First, First) -> Bool)? = nil
  ) {
    self.first = first
    self.second = second
    self.forward = forward
    self.backward = backward
    self.isRedundantForward = isRedundantForward
    self.isRedundantBackward = isRedundantBackward
    key = BindingKey(
      target: ObjectIdentifier(second), keyPath: \Observable<Second>.value, kind: .twoWay)
  }

  deinit {
    lock.deallocate()
  }

  func connect(_ first: Observable<First>, _ second: Observable<Second>) {
    // Rebinding replaces: the earlier two-way binding of `second` ends before this link pushes
    // its value there, so the old model never receives the new model's value.
    BindingRegistry.shared.install(self, target: second)?.unbind()
    // `second` first, so that the echo of the initial push is recognised.
    second.observe(with: self, options: [.new], in: .delivering) { link, value in
      link.sendBack(value)
    }
    first.observe(with: self, options: [.initial, .new], in: .delivering) { link, value in
      link.sendForward(value)
    }
    if lock.withLock({ isEnded }) { removeRegistrations() }
  }

  func removeRegistration(identifiedBy token: AnyObject) {
    unbind()
  }

  func unbind() {
    lock.withLock { isEnded = true }
    BindingRegistry.shared.remove(self)
    removeRegistrations()
  }

  private func removeRegistrations() {
    first?.removeObserver(self)
    second?.removeObserver(self)
  }

  private func sendForward(_ value: First) {
    guard let second, !isEcho(from: .first) else { return }
    let converted = forward(value)
    if let isRedundantForward, isRedundantForward(second.value, converted) { return }
    expectEcho(from: .second)
    second.value = converted
  }

  private func sendBack(_ value: Second) {
    guard let first, !isEcho(from: .second) else { return }
    guard let converted = backward(value) else { return }
    if let isRedundantBackward, isRedundantBackward(first.value, converted) { return }
    expectEcho(from: .first)
    first.value = converted
  }

  /// Whether a change from `side` is the echo of this link's own write, which it consumes. The
  /// guard counts the link's own sets, so it never compares values.
  private func isEcho(from side: Side) -> Bool {
    lock.withLock {
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
  }

  private func expectEcho(from side: Side) {
    lock.withLock {
      switch side {
      case .first: echoesFromFirst += 1
      case .second: echoesFromSecond += 1
      }
    }
  }
}

// Every mutable property is guarded by `lock`; the weak references are only read (a weak load
// is atomic), and the conversions and comparisons are `@Sendable` where the binding is made or
// come from `Equatable`.
extension TwoWayLink: @unchecked Sendable {}

extension TwoWayLink: ReplaceableBinding {}
