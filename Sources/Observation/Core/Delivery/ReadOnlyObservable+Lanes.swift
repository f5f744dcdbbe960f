// The lanes an observable keeps for callbacks that run in an isolation of their own: one for
// main-actor registrations (per main scheduler) and one per other actor, so that their calls run
// in the order of rounds and, within a round, of registrations (see the Threading article).

extension ReadOnlyObservable {
  /// The lane of this observable's main-actor registrations made under the current
  /// ``MainScheduler``: shared by all of them, so that calls that wait for the main queue run in
  /// the order of rounds and, within a round, of registrations.
  ///
  /// - Returns: The lane, and the serial of the handle about to be made for it (see
  ///   `endedDuringDelivery`).
  final func mainActorLane() -> (lane: MainQueueLane<Value, MainActorCall>, serial: UInt) {
    let scheduler = MainScheduler.current
    lock.lock()
    defer { lock.unlock() }
    let serial = nextHandleSerial
    nextHandleSerial &+= 1
    for case let lane as MainQueueLane<Value, MainActorCall> in mainActorLanes
    where lane.scheduler.isSame(as: scheduler) {
      return (lane, serial)
    }
    let lane = MainQueueLane<Value, MainActorCall>(
      scheduler: scheduler,
      deliversBacklogInline: true
    ) { [weak self] in
      guard let self else { return nil }
      return { value, call in self.runWaitingCall(value, call) }
    }
    mainActorLanes.append(lane)
    hasMainActorLanes = true
    return (lane, serial)
  }

  /// Runs a main-actor call that waited in the lane, on the main actor, unless its registration
  /// has ended since it was queued: its closure was released (the call's handle is gone), or a
  /// removal was made while another thread delivered (``hasEnded(_:)``). For a handle that a
  /// removal can end, the handle is loaded under the lock, so a removal and the release that
  /// follows it cannot both be missed; a token's handle is never ended by a removal (cancelling
  /// releases it), so its calls do not take the lock, which the producer of the values holds
  /// for part of every set.
  final func runWaitingCall(_ value: UnsafePointer<Value>, _ call: UnsafePointer<MainActorCall>) {
    let handle: MainActorCallTarget?
    if call.pointee.endsByRemoval {
      lock.lock()
      let loaded = call.pointee.target.handle
      let isLive = loaded.map { !hasEnded($0) } ?? false
      lock.unlock()
      // Released here, if it is the last reference, outside the lock.
      handle = isLive ? loaded : nil
    } else {
      handle = call.pointee.target.handle
    }
    handle?.runWaiting(UnsafeRawPointer(value), call.pointee.option)
  }

  /// Whether a removal made during the current delivery selects `key`'s registration, lock held.
  /// Such a registration stays in the list until the deliverer's next round boundary, but its
  /// waiting main-actor calls must not run once the removing call has returned.
  func hasEnded(_ handle: MainActorCallTarget) -> Bool {
    !endedDuringDelivery.isEmpty && handle.isEnded(by: endedDuringDelivery)
  }

  /// The lane of this observable's registrations made on `actor`: shared by all of them, so that
  /// their calls run in the order of rounds and, within a round, of registrations. Lanes whose
  /// actor is gone are dropped here.
  final func actorLane(for actor: any Actor) -> ActorLane<Call<Value>> {
    let (lane, dropped): (ActorLane<Call<Value>>, [ActorLane<Call<Value>>]) = lock.withLock {
      let dropped = actorLanes.filter { !$0.isAlive }
      actorLanes.removeAll { !$0.isAlive }
      if let lane = actorLanes.first(where: { $0.runs(on: actor) }) { return (lane, dropped) }
      let lane = ActorLane<Call<Value>>(actor: actor) { call in
        call.target?.run(call.value, call.option)
      }
      actorLanes.append(lane)
      return (lane, dropped)
    }
    // Released after unlocking: a dropped lane may still hold values, whose deinit is user code.
    withExtendedLifetime(dropped) {}
    return lane
  }
}
