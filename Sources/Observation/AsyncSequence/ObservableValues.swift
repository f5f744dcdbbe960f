/// An asynchronous sequence of an observable's values: the current value first, then every
/// change, in order.
///
/// Get one from ``ReadOnlyObservable/values`` or
/// ``ReadOnlyObservable/values(bufferingPolicy:)`` and iterate it with `for await`:
///
/// ```swift
/// for await score in game.score.values {
///   scoreLabel.text = "\(score)"
/// }
/// ```
///
/// The sequence never throws and never ends on its own, because an observable has no last value:
/// it finishes when the iterating task is cancelled, and a loop that `break`s or returns simply
/// stops. Each iterator registers with the observable when it is created (`for await` creates it
/// as the loop starts) and ends that registration when it finishes or is released, so an abandoned
/// loop leaves nothing behind.
///
/// ## Buffering
///
/// Values are produced by whatever thread sets the observable, while the consumer runs whenever
/// its task is scheduled. The ``BufferingPolicy`` says what happens to values that arrive faster
/// than the loop takes them:
///
/// - ``BufferingPolicy/unbounded`` (the default of ``ReadOnlyObservable/values``) keeps every
///   value, so the loop sees each change in the order it was made. A producer that never stops
///   outrunning the consumer grows the buffer without limit.
/// - ``BufferingPolicy/newest`` keeps only the newest value, so a slow loop skips straight to the
///   latest state, which is what a screen that draws the state wants.
///
/// ## Lifetimes
///
/// The sequence and each of its iterators hold the observable strongly, so a chain built inline
/// (`model.score.map { "\($0)" }.values`) lives exactly as long as the loop that iterates it. The
/// observable holds the iterator only weakly, so once the loop is over nothing keeps the
/// observable alive on the sequence's behalf.
///
/// > Important: Iterate an iterator from one task at a time, as with every `AsyncIteratorProtocol`
/// > type: the iterator is not `Sendable`. The sequence itself is `Sendable` when `Value` is, and
/// > each `for await` loop over it gets its own iterator and its own registration.
public struct ObservableValues<Value>: AsyncSequence {
  /// The type of element the sequence produces: the observable's value.
  public typealias Element = Value

  /// What the sequence keeps when values arrive faster than the loop consumes them.
  ///
  /// Choose it with ``ReadOnlyObservable/values(bufferingPolicy:)``:
  ///
  /// ```swift
  /// for await progress in download.progress.values(bufferingPolicy: .newest) {
  ///   progressView.progress = progress  // skips the values drawn over anyway
  /// }
  /// ```
  public struct BufferingPolicy: Sendable, Hashable {
    enum Kind: Hashable {
      case unbounded
      case newest
    }

    let kind: Kind

    /// Keeps every value until the loop takes it, so the loop sees every change in order.
    public static var unbounded: BufferingPolicy { BufferingPolicy(kind: .unbounded) }

    /// Keeps only the newest value not yet taken: a slow loop skips the intermediate values, and
    /// the value it gets next is always the latest one set.
    public static var newest: BufferingPolicy { BufferingPolicy(kind: .newest) }
  }

  private let observable: ReadOnlyObservable<Value>
  private let bufferingPolicy: BufferingPolicy

  init(observable: ReadOnlyObservable<Value>, bufferingPolicy: BufferingPolicy) {
    self.observable = observable
    self.bufferingPolicy = bufferingPolicy
  }

  /// Creates an iterator and registers it with the observable, which delivers its current value
  /// as the iterator's first element.
  ///
  /// - Returns: An iterator that yields the value current now, then every later change.
  public func makeAsyncIterator() -> Iterator {
    Iterator(subscription: ValuesSubscription(observable: observable, policy: bufferingPolicy.kind))
  }

  /// The iterator of an ``ObservableValues`` sequence: one registration with the observable.
  ///
  /// The registration ends when the iterating task is cancelled (``next()`` then returns `nil`)
  /// or when the iterator is released, whichever comes first.
  public struct Iterator: AsyncIteratorProtocol {
    private let subscription: ValuesSubscription<Value>

    init(subscription: ValuesSubscription<Value>) {
      self.subscription = subscription
    }

    /// Returns the next value, suspending until one arrives, or `nil` once the task is cancelled.
    ///
    /// After it has returned `nil`, every later call returns `nil` at once.
    ///
    /// - Returns: The next value in the order the values were set, or `nil` after cancellation.
    public mutating func next() async -> Value? {
      await subscription.next()
    }

    /// Returns the next value without leaving the caller's actor, suspending until one arrives,
    /// or `nil` once the task is cancelled.
    ///
    /// `for await` calls this on systems where it is available, so a loop on the main actor
    /// stays on the main actor between values.
    ///
    /// - Parameter actor: The caller's actor, if any.
    /// - Returns: The next value in the order the values were set, or `nil` after cancellation.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public mutating func next(isolation actor: isolated (any Actor)?) async -> Value? {
      await subscription.next(isolation: actor)
    }
  }
}

// The sequence stores only the observable, which is Sendable when `Value` is.
extension ObservableValues: Sendable where Value: Sendable {}

// One iterator is one consumer: its `next()` must not run from two tasks at once.
@available(*, unavailable)
extension ObservableValues.Iterator: Sendable {}
