// One round: the `.old` pass, then the `.new` pass, over the registrations in order. Every
// `.old` and `.new` callback of a round or a catch-up is called here: a token that may run on
// this thread directly from the pass, every other registration through `call(_:_:_:)` (a
// derived value's `feed` shortcut is a fast path of both; `.initial` is called by the
// registering code). Dead owners are marked for pruning.

extension ReadOnlyObservable {
  /// Runs one round, then reports it to `tracer`. Only the deliverer calls this, without the
  /// lock.
  func deliverRound(
    old oldValue: Value,
    new newValue: Value,
    tracer: Tracer?,
    lanes: [any RoundLane]?
  ) {
    // Whether the main-actor registrations run inline is decided once for the whole round.
    // Without lanes there is no main-actor registration to ask about.
    var mainActorInline = lanes != nil
    if let lanes {
      for lane in lanes where !lane.beginRound() { mainActorInline = false }
    }
    defer {
      if let lanes {
        for lane in lanes { lane.endRound() }
      }
    }
    var outcome = RoundOutcome()
    // Two copies of the passes: only a traced round counts its calls, so the common one keeps
    // no counter in its loop.
    if tracer == nil {
      deliverPasses(
        old: oldValue, new: newValue, mainActorInline: mainActorInline, counting: false,
        outcome: &outcome)
    } else {
      deliverPasses(
        old: oldValue, new: newValue, mainActorInline: mainActorInline, counting: true,
        outcome: &outcome)
    }
    if let tracer {
      tracer.handler(
        RoundTrace(
          name: tracer.name,
          oldValue: String(describing: oldValue),
          newValue: String(describing: newValue),
          callbackCount: outcome.calls,
          prunedCount: outcome.pruned))
    }
  }

  /// The `.old` pass (when some entry wants it), then the `.new` pass, of one round.
  @inline(__always)
  private func deliverPasses(
    old oldValue: Value,
    new newValue: Value,
    mainActorInline: Bool,
    counting: Bool,
    outcome: inout RoundOutcome
  ) {
    // Stable for the whole round: appends are queued while a round runs, and removals only mark.
    let base = delivery.observers.base
    let count = delivery.observers.count
    let directTokens = Entry.DirectTokenTest(mainActorInline: mainActorInline)
    if delivery.observers.oldCount > 0 {
      for index in 0..<count {
        deliver(
          oldValue, .old, bit: Entry.oldBit, to: base + index, directTokens: directTokens,
          counting: counting, outcome: &outcome)
      }
    }
    for index in 0..<count {
      deliver(
        newValue, .new, bit: Entry.newBit, to: base + index, directTokens: directTokens,
        counting: counting, outcome: &outcome)
    }
  }

  @inline(__always)
  private func deliver(
    _ value: Value,
    _ option: ObservableOptions,
    bit: UInt,
    to entry: UnsafeMutablePointer<Entry>,
    directTokens: Entry.DirectTokenTest,
    counting: Bool,
    outcome: inout RoundOutcome
  ) {
    // A token that wants this pass and may be called here (nonisolated, or main-actor in a
    // round that runs them inline): one test of the word before the call.
    if entry.pointee.passes(directTokens, wanting: bit) {
      entry.pointee.callback(value, option)
      if counting { outcome.calls &+= 1 }
      return
    }
    guard entry.pointee.wants(bit) else { return }
    if call(entry, value, option) {
      if counting { outcome.calls &+= 1 }
    } else {
      lock.lock()
      delivery.observers.markRemoved(at: entry - delivery.observers.base)
      delivery.needsCompaction = true
      lock.unlock()
      outcome.pruned &+= 1
    }
  }

  /// The one call of user code for a registration's `.old` or `.new`, in a round or a
  /// catch-up: calls `entry`'s registration with `value` and `option`, unless its owner is
  /// dead, and returns `false` then, having called nothing. A main-actor token is called
  /// through its handle, which decides where the call runs (at once in a round on the main
  /// queue, otherwise through the main-actor lane). (A derived value's shortcut, `feed`, is a
  /// fast path of this call, for one registration it read under the lock.)
  @inline(__always)
  final func call(
    _ entry: UnsafeMutablePointer<Entry>, _ value: Value, _ option: ObservableOptions
  ) -> Bool {
    if entry.pointee.isToken {
      if entry.pointee.isMainActorToken {
        Self.callThroughHandle(entry.pointee.owner, value, option)
      } else {
        entry.pointee.callback(value, option)
      }
      return true
    }
    // The one weak load per call; the strong reference keeps the owner alive for the call.
    guard let owner = entry.pointee.owner else { return false }
    entry.pointee.callback(value, option)
    keepAlive(owner)
    return true
  }

  /// Calls a main-actor token registration that may not run here: through its handle, which
  /// is `handle` (the entry's weak `owner` slot; `nil` once its token is gone).
  @inline(never)
  static func callThroughHandle(
    _ handle: AnyObject?, _ value: Value, _ option: ObservableOptions
  ) {
    guard let handle else { return }
    unsafeDowncast(handle, to: MainActorHandle<Value>.self).dispatch(value, option)
  }
}

/// What one round did: the calls are counted only in a traced round (see `deliverRound`), the
/// pruned entries in every round, since pruning is rare.
private struct RoundOutcome {
  var calls = 0
  var pruned = 0
}

/// Keeps `object` alive until this point, without a call: the standard library's
/// `withExtendedLifetime` is not inlined into this unspecialized code and costs a call per
/// delivery.
@inline(__always)
func keepAlive(_ object: AnyObject?) {
  #if compiler(>=6.1)
    extendLifetime(object)
  #else
    withExtendedLifetime(object) {}
  #endif
}
