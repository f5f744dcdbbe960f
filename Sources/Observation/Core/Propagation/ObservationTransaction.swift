/// Runs `body` as one transaction: its sets store at once, and their rounds wait until the
/// outermost transaction on this thread ends.
///
/// Then every observable that changed runs **one** round, with the value from before the
/// transaction as old and its value at the end as new, in the order the observables were first
/// changed; derived values are recomputed once, from the final values. So a screen that updates
/// two names in one action shows the new full name once, never a mix:
///
/// ```swift
/// let first = Observable("Ray")
/// let last = Observable("Wenderlich")
/// let fullName = first.combineLatest(last).map { "\($0) \($1)" }
/// let token = fullName.observe { name, _ in print(name) }
/// withObservationTransaction {
///   first.value = "Jane"
///   last.value = "Doe"
/// }
/// // prints "Jane Doe" once
/// ```
///
/// - Its first set into a graph (observables joined by derived values) takes that graph's turn,
///   and the transaction keeps it until it ends: another thread's sets into that graph wait for
///   the end, so a transaction is never overlapped by another propagation (see <doc:Threading>).
///   Reads are not blocked: any thread reads each set at once.
/// - A set that could only wait for a thread that waits for this transaction (another
///   transaction that took the same graphs in the opposite order, or a callback blocked on this
///   thread) makes the whole transaction wait: what it stored is undone, and all its sets are
///   made again when `body` returns, as one transaction, after the propagation they would have
///   waited for (see <doc:Threading#When-a-setter-cannot-wait>).
/// - Nested transactions join the outermost one.
/// - A set inside a callback of the transaction's rounds is an ordinary set: it is queued behind
///   the current round as usual (see <doc:OrderingContract>).
/// - A registration made inside the transaction gets `.initial` at once, with the value stored
///   so far, and the transaction's round when it ends.
/// - If `body` throws, what it set is delivered all the same, then the error is rethrown.
///
/// - Parameter body: The changes to make together.
/// - Returns: What `body` returns.
public func withObservationTransaction<Result>(_ body: () throws -> Result) rethrows -> Result {
  let context = ObservationContext.current
  context.beginTransaction()
  defer { context.endTransaction() }
  return try body()
}
