/// A serial line of work items delivered on an actor, in order: the actor counterpart of
/// ``MainQueueLane``.
///
/// At most one task is outstanding per lane; it runs on the actor and delivers what is waiting,
/// then ends. Items submitted while it runs join the queue and are delivered by it, after the
/// items before them.
final class ActorLane<Item> {
  /// Weak: the registration lives in an observable that the actor itself often keeps alive (a
  /// token in one of its properties), and it must not keep the actor alive in turn. Calls that
  /// wait after the actor is gone are dropped.
  private weak var actor: (any Actor)?
  private let deliver: (Item) -> Void
  private let lock = Lock()
  // Guarded by `lock`.
  @exclusivity(unchecked) private var items = WorkQueue<Item>()
  @exclusivity(unchecked) private var isScheduled = false

  /// - Parameters:
  ///   - actor: The actor that runs `deliver`.
  ///   - deliver: Called with each item, isolated to `actor`, one at a time, in order.
  init(actor: any Actor, deliver: @escaping (Item) -> Void) {
    self.actor = actor
    self.deliver = deliver
  }

  deinit {
    lock.deallocate()
  }

  /// Whether this lane delivers on `actor`.
  func runs(on actor: any Actor) -> Bool {
    self.actor === actor
  }

  /// Whether the lane's actor still exists (a lane holds it weakly).
  var isAlive: Bool {
    actor != nil
  }

  func submit(_ item: Item) {
    lock.lock()
    items.append(item)
    let mustSchedule = !isScheduled
    isScheduled = true
    lock.unlock()
    guard mustSchedule else { return }
    guard let actor else {
      let dropped = lock.withLock {
        isScheduled = false
        return items.takeAll()
      }
      // Released after unlocking: a value's deinit is user code.
      withExtendedLifetime(dropped) {}
      return
    }
    Task { await self.drain(on: actor) }
  }

  private func drain(on actor: isolated any Actor) {
    while true {
      lock.lock()
      guard let item = items.popFirst() else {
        isScheduled = false
        lock.unlock()
        return
      }
      lock.unlock()
      deliver(item)
    }
  }
}

// `items` and `isScheduled` are guarded by `lock`, and `actor` is written only in `init` (a weak
// load is atomic); `deliver` is only called from `drain(on:)`, isolated to `actor`, by one task
// at a time.
extension ActorLane: @unchecked Sendable {}
