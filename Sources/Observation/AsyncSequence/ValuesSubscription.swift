/// The state behind one ``ObservableValues`` iterator: a registration with the observable, a
/// buffer of values the loop has not taken yet, and the loop's suspended `next()` call, if any.
///
/// The observable's callback only ever buffers a value and wakes the consumer (it is not user
/// code, so it may take the lock); the consumer only ever takes.
///
/// No value is released under the lock: a value's deinit is user code that may set the same
/// observable, whose round comes back here for the lock on the same thread. The loop moves a
/// value out of the buffer when it takes it, so trimming the buffer releases nothing; a value
/// replaced (`.newest`) or dropped (cancellation) is released after unlocking. The observable captures the
/// subscription weakly, and the subscription owns the registration's token, so releasing the iterator ends the
/// registration and the observable never keeps an abandoned loop's state alive.
final class ValuesSubscription<Value> {
  typealias Kind = ObservableValues<Value>.BufferingPolicy.Kind

  private let lock = Lock()
  private let policy: Kind

  // Guarded by `lock`.
  /// The values not taken yet from `head` on; taken slots before it are `nil` (the value moved
  /// to the loop) and are reclaimed in bulk.
  private var buffer: [Value?] = []
  /// The index of the oldest value in `buffer` not taken yet.
  private var head = 0
  private var waiter: UnsafeContinuation<Void, Never>?
  private var isFinished = false
  private var token: ObservationToken?

  init(observable: ReadOnlyObservable<Value>, policy: Kind) {
    self.policy = policy
    // `.initial` makes "the current value, then every change" one step: the engine delivers the
    // current value before any change reaches this registration, even if another thread is
    // setting the value right now. The closure may still run once after `finish()` on another
    // thread (a removal from another thread waits for the round boundary), hence `weak`.
    let token = observable.observe(options: [.initial, .new], in: .delivering) {
      [weak self] value, _ in
      self?.receive(value)
    }
    lock.withLock { self.token = token }
  }

  deinit {
    // The token is released right after this and ends the registration.
    lock.deallocate()
  }

  /// Buffers `value` according to the policy and wakes the waiting consumer, if any.
  ///
  /// The value itself goes through the buffer, never through the continuation, so a value only
  /// ever crosses to the consumer under the lock.
  private func receive(_ value: Value) {
    lock.lock()
    if isFinished {
      lock.unlock()
      return
    }
    // The value `.newest` replaces.
    var replaced: Value??
    switch policy {
    case .unbounded:
      buffer.append(value)
    case .newest:
      // The buffer holds at most the one value not taken yet (see `takeBufferedValue`).
      if head < buffer.count {
        replaced = buffer[head]
        buffer[head] = value
      } else {
        buffer.removeAll(keepingCapacity: true)
        head = 0
        buffer.append(value)
      }
    }
    let waiter = self.waiter
    self.waiter = nil
    lock.unlock()
    Lock.assertNotHeld("A buffered value was released")
    // Released here, after unlocking, not where it was replaced.
    withExtendedLifetime(replaced) {}
    waiter?.resume()
  }

  /// The next buffered value, or suspends until one arrives; `nil` once finished.
  ///
  /// - Parameter actor: The caller's isolation, kept while suspended so a loop on an actor
  ///   does not hop off it between values.
  /// - Returns: The oldest value not taken yet, or `nil` once the task has been cancelled.
  func next(isolation actor: isolated (any Actor)? = #isolation) async -> Value? {
    if Task.isCancelled { finish() }
    while true {
      lock.lock()
      if isFinished {
        lock.unlock()
        return nil
      }
      if head < buffer.count {
        let value = takeBufferedValue()
        lock.unlock()
        return value
      }
      lock.unlock()
      await withTaskCancellationHandler {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
          lock.lock()
          if isFinished || head < buffer.count {
            lock.unlock()
            continuation.resume()
          } else {
            require(waiter == nil, "An ObservableValues iterator was iterated from two tasks.")
            waiter = continuation
            lock.unlock()
          }
        }
      } onCancel: {
        finish()
      }
    }
  }

  /// Moves the oldest buffered value out and returns it, leaving `nil` in its slot, so that
  /// reclaiming slots releases nothing under the lock. Called with the lock held.
  private func takeBufferedValue() -> Value {
    guard let value = buffer[head] else {
      preconditionFailure("ValuesSubscription took a value it had already taken")
    }
    buffer[head] = nil
    head += 1
    if head == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 32 && head * 2 >= buffer.count {
      // Reclaim taken slots once they are the larger part, so a consumer that keeps up only on
      // average does not keep every value it has already taken.
      buffer.removeFirst(head)
      head = 0
    }
    return value
  }

  /// Ends the sequence: drops buffered values (after unlocking), ends the registration and
  /// wakes the consumer.
  /// Runs from the task's cancellation handler, on whatever thread cancelled the task.
  private func finish() {
    lock.lock()
    if isFinished {
      lock.unlock()
      return
    }
    isFinished = true
    let waiter = self.waiter
    self.waiter = nil
    let token = self.token
    self.token = nil
    var dropped: [Value?] = []
    swap(&dropped, &buffer)
    head = 0
    lock.unlock()
    Lock.assertNotHeld("Buffered values were released")
    // Released here, after unlocking, not at the swap: their deinit may set the observable.
    withExtendedLifetime(dropped) {}
    token?.cancel()
    waiter?.resume()
  }
}

// Every stored property is guarded by `lock`. Values travel from the setting thread to the
// consuming task, as they do between a set and an observer callback; the public sequence is
// `Sendable` only when `Value` is.
extension ValuesSubscription: @unchecked Sendable {}
