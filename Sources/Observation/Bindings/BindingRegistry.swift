/// Which property of which object a binding writes to, and which kind of binding it is: a
/// binding replaces only the earlier binding with the same key.
struct BindingKey: Hashable {
  /// A one-way binding feeds its target; a two-way binding also reads it back. They do
  /// different jobs, so one does not replace the other: a feed bound into an observable leaves
  /// that observable's two-way binding in place, and the other way round.
  enum Kind: Hashable {
    case oneWay, twoWay
  }

  let target: ObjectIdentifier
  let keyPath: AnyKeyPath
  let kind: Kind
}

/// A binding that the registry ends when its (target, key path) pair is bound again by a
/// binding of the same kind: a key-path binding (``PropertyBinding``), or a two-way binding,
/// whose target is the `value` of the observable it was bound to.
protocol ReplaceableBinding: AnyObject, Sendable {
  /// The pair the binding writes to.
  var key: BindingKey { get }
  /// Ends the binding; a second call does nothing.
  func unbind()
}

/// The current binding of every bound (target, key path) pair, one of each kind, so that binding
/// a pair again the same way ends its earlier binding of that kind, whichever source it came
/// from.
///
/// The one process-wide table the binding layer keeps: a target has no storage of its own to
/// remember its bindings in. Records hold the target and the binding weakly; a binding lives as
/// long as its registration (whose closure keeps it), so a record goes stale when the target dies
/// or the binding ends, and stale records are pruned as the table grows.
///
/// `@unchecked Sendable`: `records` and `pruneThreshold` are guarded by `lock`, and nothing here
/// calls out while holding it.
final class BindingRegistry: @unchecked Sendable {
  static let shared = BindingRegistry()

  private struct Record {
    weak var target: AnyObject?
    weak var binding: (any ReplaceableBinding)?

    var isLive: Bool { target != nil && binding != nil }
  }

  private let lock = Lock()
  // `records` and `pruneThreshold` are guarded by `lock`.
  private var records: [BindingKey: Record] = [:]
  private var pruneThreshold = minimumPruneThreshold
  private static var minimumPruneThreshold: Int { 64 }

  /// Records `binding` as its pair's binding and returns the one it replaces, which the caller
  /// ends after this returns (ending it takes the source's lock, never under this one).
  func install(
    _ binding: any ReplaceableBinding, target: AnyObject
  ) -> (any ReplaceableBinding)? {
    lock.lock()
    // A record of a dead target under the same key means the address was reused: its binding,
    // if it still exists, writes to nobody and is ended all the same.
    let previous = records.updateValue(
      Record(target: target, binding: binding), forKey: binding.key)
    var pruned: [BindingKey: Record] = [:]
    if records.count >= pruneThreshold {
      pruned = records
      records = records.filter { $0.value.isLive }
      pruneThreshold = max(Self.minimumPruneThreshold, records.count * 2)
    }
    let replaced = previous?.binding
    lock.unlock()
    withExtendedLifetime(pruned) {}
    return replaced
  }

  /// Forgets `binding` if it is still its pair's binding.
  func remove(_ binding: any ReplaceableBinding) {
    lock.withLock {
      if let record = records[binding.key], record.binding === binding || !record.isLive {
        records[binding.key] = nil
      }
    }
  }

  /// The number of records, live or stale, for tests of pruning.
  var recordCount: Int {
    lock.withLock { records.count }
  }
}
