// Two-way bindings between observables of different types, through a pair of conversions.

extension Observable {
  /// Keeps `other` showing this observable's value through `forward`, and sets this observable
  /// from `other` through `backward` whenever `backward` accepts `other`'s value.
  ///
  /// This binds a model to a control of another type, such as an `Int` to a text field's text:
  ///
  /// ```swift
  /// let quantity = Observable(1)
  /// let quantityField = TextField()
  /// let token = quantity.bindBidirectionally(
  ///   to: quantityField.text,
  ///   forward: { String($0) },
  ///   backward: { Int($0) }
  /// )
  /// quantityField.text.value = "12"   // quantity is now 12
  /// quantityField.text.value = "12a"  // rejected: quantity stays 12
  /// quantity.value = 3                // quantityField.text is now "3"
  /// ```
  ///
  /// **This observable wins at the moment of binding**: `other` is set to `forward(value)`
  /// before the call returns. Then each change of this observable sets `other` to its
  /// conversion, and each change of `other` for which `backward` returns a value sets this
  /// observable to it. When `backward` returns `nil` (text that is not a number), this
  /// observable is not set and keeps its value, and `other` keeps what was typed.
  ///
  /// Each change is forwarded exactly once, without an echo back to where it came from, as
  /// with ``bindBidirectionally(to:)-64px9``: typing `"007"` sets the model to `7` and leaves
  /// the field showing `"007"`, not `forward(7)`. A change made *in response* to a forwarded
  /// one (an observer of the model that clamps `150` to `100`) is forwarded like any other, so
  /// the field then shows `"100"`.
  ///
  /// ## Lifetime
  ///
  /// The binding lasts as long as the returned token: cancel or release it to end the binding.
  /// It holds neither observable strongly, and stops by itself when either of them is
  /// deallocated.
  ///
  /// > Important: `forward` runs synchronously on the thread that delivers this observable's
  /// > change and `backward` on the thread that delivers `other`'s, each never concurrently
  /// > with itself and with no lock held; the side they set notifies its observers there. As
  /// > for the unconverted form, two-way bindings are meant for sides set from one thread at a
  /// > time.
  ///
  /// - Parameters:
  ///   - other: The observable to keep in step with this one.
  ///   - forward: Converts this observable's value to `other`'s.
  ///   - backward: Converts `other`'s value to this observable's, or returns `nil` to leave this
  ///     observable unchanged.
  /// - Returns: The token that owns the binding.
  public func bindBidirectionally<Other>(
    to other: Observable<Other>,
    forward: @escaping @Sendable (Value) -> Other,
    backward: @escaping @Sendable (Other) -> Value?
  ) -> ObservationToken {
    precondition(other !== self, "An observable cannot be bound to itself.")
    let link = ConvertingLink(self, other, forward: forward, backward: backward)
    let token = ObservationToken(source: link)
    link.connect(self, other)
    return token
  }
}

/// The state of one converting two-way binding: it forwards each change of either observable to
/// the other through its conversion, and swallows the change that forwarding causes in return.
///
/// The loop guard counts echoes, as ``TwoWayLink`` does: before setting one side, the link
/// records that the next change it receives from that side is its own echo. A value that
/// `backward` rejects sets nothing, so it expects no echo.
///
/// The link owns both registrations and is owned by the token that
/// `bindBidirectionally(to:forward:backward:)` returns; it holds both observables weakly.
final class ConvertingLink<First, Second>: RegistrationRemoving {
  private weak var first: Observable<First>?
  private weak var second: Observable<Second>?
  private let forward: (First) -> Second
  private let backward: (Second) -> First?
  private let lock = Lock()
  private var echoesFromFirst = 0  // guarded by `lock`
  private var echoesFromSecond = 0  // guarded by `lock`

  init(
    _ first: Observable<First>,
    _ second: Observable<Second>,
    forward: @escaping (First) -> Second,
    backward: @escaping (Second) -> First?
  ) {
    self.first = first
    self.second = second
    self.forward = forward
    self.backward = backward
  }

  deinit {
    lock.deallocate()
  }

  /// Registers on both sides and pushes `first`'s converted value to `second`.
  func connect(_ first: Observable<First>, _ second: Observable<Second>) {
    // `second` first, so that the echo of the initial push is recognised.
    second.observe(with: self) { link, value in link.sendBack(value) }
    first.observe(with: self, options: [.initial, .new]) { link, value in
      link.sendForward(value)
    }
  }

  func removeRegistration(identifiedBy token: AnyObject) {
    first?.removeObserver(self)
    second?.removeObserver(self)
  }

  /// Forwards a change of `first` to `second`.
  private func sendForward(_ value: First) {
    guard let second, !isEcho(\.echoesFromFirst) else { return }
    let converted = forward(value)
    lock.withLock { echoesFromSecond += 1 }
    second.value = converted
  }

  /// Forwards a change of `second` to `first`, if `backward` accepts it.
  private func sendBack(_ value: Second) {
    guard let first, !isEcho(\.echoesFromSecond) else { return }
    guard let converted = backward(value) else { return }
    lock.withLock { echoesFromFirst += 1 }
    first.value = converted
  }

  /// Whether the change just received is the link's own echo; consumes it if so.
  private func isEcho(_ echoes: ReferenceWritableKeyPath<ConvertingLink, Int>) -> Bool {
    lock.withLock {
      guard self[keyPath: echoes] > 0 else { return false }
      self[keyPath: echoes] -= 1
      return true
    }
  }
}

// Every mutable property is guarded by `lock`; the weak references are only read (a weak load
// is atomic), and the conversions are `@Sendable` where the binding is made.
extension ConvertingLink: @unchecked Sendable {}
