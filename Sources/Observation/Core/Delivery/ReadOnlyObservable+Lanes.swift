// The lanes an observable keeps for its main-actor registrations, one per main scheduler, which
// the mailbox of that scheduler's main queue orders among every observable's (see the Threading
// article).

extension ReadOnlyObservable {
  /// The lane of this observable's main-actor registrations made under the current
  /// ``MainScheduler``: shared by all of them, so that calls that wait for the main queue run in
  /// the order of rounds and, within a round, of registrations. Its mailbox, shared with every
  /// other observable's lane on that main queue, orders them among those lanes' calls.
  ///
  /// - Returns: The lane, and the serial of the handle about to be made for it (see
  ///   `endedDuringDelivery`).
  final func mainActorLane() -> (lane: MainActorLane<Value>, serial: UInt) {
    let scheduler = MainScheduler.current
    lock.lock()
    defer { lock.unlock() }
    let delivery = makeDeliveryIfNeeded()
    let serial = delivery.nextHandleSerial
    delivery.nextHandleSerial &+= 1
    let ends: MainActorEnds
    if let existing = delivery.mainActorEnds {
      ends = existing
    } else {
      ends = MainActorEnds()
      delivery.mainActorEnds = ends
    }
    for case let lane as MainQueueLane<Value, MainActorCall> in delivery.mainActorLanes
    where lane.scheduler.isSame(as: scheduler) {
      return (MainActorLane(lane: lane, ends: ends), serial)
    }
    let cursor = MainActorLaneCursor()
    let lane = MainQueueLane<Value, MainActorCall>(
      mailbox: .forMainActor(on: scheduler)
    ) { [weak self] in
      guard let self else { return nil }
      let batch = MainActorBatch(cursor)
      return { value, call in self.runWaitingCall(value, call, batch.cursor) }
    }
    delivery.mainActorLanes.append(lane)
    delivery.hasMainActorLanes = true
    return (MainActorLane(lane: lane, ends: ends), serial)
  }

  /// Runs a main-actor call that waited in the lane, on the main actor, unless its registration
  /// has ended since it was queued: its target was ended (``MainActorTarget/end()``), or a
  /// removal was made while another thread delivered (``hasEnded(_:)``).
  ///
  /// The per-call path takes no lock of the observable, which the producer of the values holds
  /// for part of every set: only the lane's ``MainActorEnds`` lock, inside the target. The
  /// observable's removals are checked under its lock only when the target changes or the
  /// observable recorded a removal since the last check (``MainActorEnds/epoch``); a removal
  /// recorded after that check moves the epoch, so the next call checks again.
  final func runWaitingCall(
    _ value: UnsafePointer<Value>,
    _ call: UnsafePointer<MainActorCall>,
    _ cursor: MainActorLaneCursor
  ) {
    if let named = call.pointee.target, named !== cursor.current {
      cursor.current = named
      cursor.checkedEpoch = .max
      // Released here, on the main queue and without a lock, if the owner died meanwhile.
      cursor.heldOwner = nil
    }
    // Never `nil` here: a call that names no target follows one that did (see `MainActorCall`).
    guard let target = cursor.current else { return }
    let raw = UnsafeRawPointer(value)
    let option = call.pointee.option
    while let epoch = target.runWaiting(
      raw, option, checkedEpoch: cursor.checkedEpoch, heldOwner: &cursor.heldOwner)
    {
      lock.lock()
      let isEnded = hasEnded(target)
      lock.unlock()
      if isEnded { return }
      cursor.checkedEpoch = epoch
    }
  }

  /// Whether a removal made during the current delivery selects `target`'s registration, lock
  /// held. Such a registration stays in the list until the deliverer's next round boundary, but
  /// its waiting main-actor calls must not run once the removing call has returned.
  func hasEnded(_ target: MainActorCallTarget) -> Bool {
    !delivery.endedDuringDelivery.isEmpty && target.isEnded(by: delivery.endedDuringDelivery)
  }
}
