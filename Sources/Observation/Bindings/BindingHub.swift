/// The one registration through which a source writes to every property of one target that is
/// bound to it.
///
/// The core can remove registrations only by owner (`removeObserver(target)`, or a dead owner),
/// not one by one. Registering each key-path binding on its own, owned by the target, would
/// leave a dead registration behind in the old source every time a cell is bound again (every
/// `reloadData()` would add one per visible cell). A hub is registered once per (source,
/// target) pair, owned by the target, and bindings come and go inside it: the registrations a
/// target leaves behind are bounded by the number of sources it was ever bound to, and all of
/// them go when the target goes.
///
/// The hub is reached from the registry weakly and from its registration strongly, so it lives
/// exactly as long as that registration.
final class BindingHub<Value>: BindingHubProtocol {
  private struct Slot {
    let binding: PropertyBinding
    /// The source when it is a derived chain: the slot keeps it alive, so an inline chain lives
    /// as long as its binding. The chain's registration holds this hub, a cycle that ends with
    /// the registration (target gone, `removeObserver(target)`) or with the slot (`unbind()`,
    /// rebinding), whoever holds the ``PropertyBinding`` handle.
    let retained: AnyObject?
    let apply: (AnyObject, Value) -> Void
  }

  /// The target the hub's registration is owned by. A hub whose target is gone is never reused,
  /// even if a new object appears at the same address.
  private(set) weak var target: AnyObject?
  private let lock = Lock()
  private var slots: [Slot] = []  // guarded by `lock`

  init(target: AnyObject) {
    self.target = target
  }

  deinit {
    lock.deallocate()
  }

  /// Adds a binding; `apply` writes a value to the target, and `source` is kept alive with the
  /// binding when it is a derived chain.
  func add(
    _ binding: PropertyBinding,
    retaining source: AnyObject?,
    apply: @escaping (AnyObject, Value) -> Void
  ) {
    lock.withLock { slots.append(Slot(binding: binding, retained: source, apply: apply)) }
  }

  func remove(_ binding: PropertyBinding) {
    let removed: [Slot] = lock.withLock {
      let removed = slots.filter { $0.binding === binding }
      slots.removeAll { $0.binding === binding }
      return removed
    }
    // Releasing a chain ends its upstream registrations: not under this lock.
    withExtendedLifetime(removed) {}
  }

  /// Applies `value` through every binding, in the order they were added. Runs on the thread
  /// delivering the source's round, without the lock.
  func deliver(_ value: Value, to target: AnyObject) {
    // Plain lock and unlock rather than `withLock`: this runs unspecialized, where the generic
    // helper would cost a metadata look-up per delivery.
    lock.lock()
    let current = slots
    lock.unlock()
    for slot in current where slot.binding.isApplying {
      slot.apply(target, value)
    }
  }

}

/// What a ``PropertyBinding`` needs from its hub, whatever the value type.
protocol BindingHubProtocol: AnyObject {
  func remove(_ binding: PropertyBinding)
}
