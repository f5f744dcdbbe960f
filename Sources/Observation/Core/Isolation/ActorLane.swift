/// The one serial line of calls delivered on an actor, in order: the actor counterpart of the
/// main queue's ``MainQueueMailbox``, shared by the registrations of every observable made on
/// that actor (``lane(for:)``), so that their calls run in the order they were made.
///
/// At most one task is outstanding per lane; it runs on the actor and delivers what is waiting,
/// then ends. Calls submitted while it runs join the queue and are delivered by it, after the
/// calls before them.
final class ActorLane {
  /// Weak: the registration lives in an observable that the actor itself often keeps alive (a
  /// token in one of its properties), and it must not keep the actor alive in turn. Calls that
  /// wait after the actor is gone are dropped.
  private weak var actor: (any Actor)?
  private let lock = Lock()
  // Guarded by `lock`.
  @exclusivity(unchecked) private var calls = WorkQueue<() -> Void>()
  @exclusivity(unchecked) private var isScheduled = false

  private init(actor: any Actor) {
    self.actor = actor
  }

  deinit {
    lock.deallocate()
  }

  /// The lane of `actor`: the one its registrations' closures hold, or a new one when none
  /// holds it any more (no call can be waiting in it then).
  static func lane(for actor: any Actor) -> ActorLane {
    Registry.shared.lane(for: actor)
  }

  /// Queues `call` to run isolated to the lane's actor, after the calls queued before it. It
  /// is dropped if the actor is gone.
  func submit(_ call: @escaping () -> Void) {
    lock.lock()
    calls.append(call)
    let mustSchedule = !isScheduled
    isScheduled = true
    lock.unlock()
    guard mustSchedule else { return }
    guard let actor else {
      let dropped = lock.withLock {
        isScheduled = false
        return calls.takeAll()
      }
      // Released after unlocking: a call's captured value may have a deinit of the user.
      withExtendedLifetime(dropped) {}
      return
    }
    Task { await self.drain(on: actor) }
  }

  private func drain(on actor: isolated any Actor) {
    while true {
      lock.lock()
      guard let call = calls.popFirst() else {
        isScheduled = false
        lock.unlock()
        return
      }
      lock.unlock()
      call()
    }
  }

  /// The lanes of the actors registrations were made on, held weakly, by the actor's identity.
  ///
  /// `@unchecked Sendable`: `lanes` and `pruneAt` are guarded by `lock`.
  private final class Registry: @unchecked Sendable {
    private struct Entry {
      weak var lane: ActorLane?
    }

    static let shared = Registry()
    private let lock = Lock()
    @exclusivity(unchecked) private var lanes: [ObjectIdentifier: Entry] = [:]
    /// The count of entries at which the next look-up drops the entries of lanes that are gone,
    /// doubled from what is left each time, so that dropping costs O(1) per look-up.
    @exclusivity(unchecked) private var pruneAt = 16

    func lane(for actor: any Actor) -> ActorLane {
      lock.lock()
      defer { lock.unlock() }
      let id = ObjectIdentifier(actor)
      // A lane whose actor is gone does not run on a new actor at the same address.
      if let lane = lanes[id]?.lane, lane.actor === actor { return lane }
      if lanes.count >= pruneAt {
        lanes = lanes.filter { $0.value.lane?.actor != nil }
        pruneAt = max(16, lanes.count * 2)
      }
      let lane = ActorLane(actor: actor)
      lanes[id] = Entry(lane: lane)
      return lane
    }
  }
}

// `calls` and `isScheduled` are guarded by `lock`, and `actor` is written only in `init` (a weak
// load is atomic). A call is handed over through `lock`: the delivering thread makes it and
// never touches it again, and it runs once, only in `drain(on:)`, isolated to `actor`, by one
// task at a time. What it captures crosses threads only when its observable does, which
// requires `Value: Sendable` (the observables' `Sendable` conformances); the callback it runs
// is the registration's actor-isolated closure.
extension ActorLane: @unchecked Sendable {}
