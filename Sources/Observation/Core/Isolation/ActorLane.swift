/// A serial line of work items delivered on an actor, in order: the actor counterpart of
/// ``MainQueueLane``.
///
/// At most one task is outstanding per lane; it runs on the actor and delivers what is waiting,
/// then ends. Items submitted while it runs join the queue and are delivered by it, after the
/// items before them.
final class ActorLane<Item> {
  private let actor: any Actor
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

  func submit(_ item: Item) {
    lock.lock()
    items.append(item)
    let mustSchedule = !isScheduled
    isScheduled = true
    lock.unlock()
    guard mustSchedule else { return }
    let actor = actor
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

// `items` and `isScheduled` are guarded by `lock`; `deliver` is only called from `drain(on:)`,
// isolated to `actor`, by one task at a time.
extension ActorLane: @unchecked Sendable {}
