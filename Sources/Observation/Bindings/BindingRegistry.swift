/// Which property of which object a key-path binding writes to.
struct BindingKey: Hashable {
  let target: ObjectIdentifier
  let keyPath: AnyKeyPath
}

/// The process-wide table of key-path bindings: the current binding of every bound (target, key
/// path) pair, so that binding a pair again replaces the earlier binding whatever its source,
/// and the ``BindingHub`` of every (source, target) pair.
///
/// It holds everything weakly: a binding is kept by its hub (and by its handle, if the caller
/// keeps it), a hub by its registration, and the registration by the source while the target
/// lives. Records whose objects are gone are pruned whenever a table has doubled since the last
/// pruning, so they cannot pile up.
final class BindingRegistry: @unchecked Sendable {
  static let shared = BindingRegistry()

  private struct BindingRecord {
    weak var target: AnyObject?
    weak var binding: PropertyBinding?

    var isLive: Bool { target != nil && binding != nil }
  }

  private struct HubKey: Hashable {
    let source: ObjectIdentifier
    let target: ObjectIdentifier
  }

  private struct HubRecord {
    weak var hub: (any BindingHubProtocol)?
  }

  private let lock = Lock()
  // Both tables and both thresholds are guarded by `lock`.
  private var bindings: [BindingKey: BindingRecord] = [:]
  private var hubs: [HubKey: HubRecord] = [:]
  private var bindingsPruneThreshold = minimumPruneThreshold
  private var hubsPruneThreshold = minimumPruneThreshold
  private static var minimumPruneThreshold: Int { 64 }

  /// Makes `binding` the current binding of its key and returns the one it replaces, which the
  /// caller deactivates (outside this lock: deactivating may release a derived chain).
  func install(_ binding: PropertyBinding, target: AnyObject) -> PropertyBinding? {
    lock.lock()
    defer { lock.unlock() }
    // A record of a dead target under the same key means the address was reused: its binding,
    // if it still exists, writes to nobody and is deactivated all the same.
    let previous = bindings.updateValue(
      BindingRecord(target: target, binding: binding),
      forKey: binding.key
    )
    if bindings.count >= bindingsPruneThreshold {
      bindings = bindings.filter { $0.value.isLive }
      bindingsPruneThreshold = max(Self.minimumPruneThreshold, bindings.count * 2)
    }
    return previous?.binding
  }

  /// Forgets `binding` if it is still the current binding of its key.
  func remove(_ binding: PropertyBinding) {
    lock.withLock {
      if let record = bindings[binding.key], record.binding === binding || !record.isLive {
        bindings[binding.key] = nil
      }
    }
  }

  /// Returns the live hub of (`source`, `target`), or creates one with `make` and reports that
  /// it is new, so that the caller registers it on the source.
  func hub<Value>(
    source: ReadOnlyObservable<Value>,
    target: AnyObject,
    make: () -> BindingHub<Value>
  ) -> (hub: BindingHub<Value>, isNew: Bool) {
    let key = HubKey(source: ObjectIdentifier(source), target: ObjectIdentifier(target))
    lock.lock()
    defer { lock.unlock() }
    if let hub = hubs[key]?.hub as? BindingHub<Value>, hub.target === target {
      return (hub, false)
    }
    let hub = make()
    hubs[key] = HubRecord(hub: hub)
    if hubs.count >= hubsPruneThreshold {
      hubs = hubs.filter { $0.value.hub != nil }
      hubsPruneThreshold = max(Self.minimumPruneThreshold, hubs.count * 2)
    }
    return (hub, true)
  }

  /// The number of records, live or dead, in both tables; for tests of the pruning.
  var recordCount: Int {
    lock.withLock { bindings.count + hubs.count }
  }
}
