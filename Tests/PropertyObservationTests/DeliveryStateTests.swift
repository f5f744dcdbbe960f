import Foundation
import Testing

@testable import PropertyObservation

/// The delivery state machine on its own, without threads: every sequence of events from three
/// threads up to a fixed length, checked against a reference written from the Threading
/// article's rules, and the illegal transitions, which must stop the program.
@Suite("Delivery state machine", .serialized)
struct DeliveryStateTests {
  private static let threads = [ThreadID(raw: 1), ThreadID(raw: 2), ThreadID(raw: 3)]

  /// One event a thread can cause.
  private enum Event: CaseIterable {
    case set, register, registerWithInitial, remove, openGate, finish, handOver
    case handOverToQueue, adoptQueuedRole
  }

  /// What the rules say, kept as plainly as possible.
  private struct Reference {
    var deliverer: ThreadID?
    /// Closed gates, by the thread whose `.initial` is running.
    var gates: [ThreadID: Int] = [:]

    /// Whether `thread` may cause `event` now: only the deliverer finishes or hands over, and
    /// only a thread with a closed gate opens one, when its `.initial` returns. A set made
    /// inside that `.initial` may make the thread the deliverer for a while, but the set has
    /// returned, and the role moved on, before `.initial` can return.
    func allows(_ event: Event, on thread: ThreadID) -> Bool {
      switch event {
      case .finish: deliverer == thread
      case .handOver: deliverer == thread
      case .handOverToQueue: deliverer == thread
      case .adoptQueuedRole: deliverer == .deliveryQueue
      case .openGate: gates[thread, default: 0] > 0 && deliverer != thread
      case .set, .register, .registerWithInitial, .remove: true
      }
    }
  }

  @Test func everySequenceOfLegalEventsFollowsTheRules() async {
    // A few seconds of pure computation: run it on a thread of its own rather than hold one of
    // the few threads that every other test's tasks share.
    let explored = await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: Self.exploreAll()) }
    }
    #expect(explored > 10_000)
  }

  private static func exploreAll() -> Int {
    var explored = 0
    func explore(_ state: DeliveryState, _ reference: Reference, depth: Int) {
      explored += 1
      guard depth > 0 else { return }
      for thread in Self.threads {
        for event in Event.allCases where reference.allows(event, on: thread) {
          var state = state
          var reference = reference
          apply(event, on: thread, to: &state, reference: &reference)
          explore(state, reference, depth: depth - 1)
        }
      }
    }
    explore(DeliveryState(), Reference(), depth: 5)
    return explored
  }

  private static func apply(
    _ event: Event,
    on thread: ThreadID,
    to state: inout DeliveryState,
    reference: inout Reference
  ) {
    let context = "\(event) on \(thread) with deliverer \(String(describing: reference.deliverer))"
    switch event {
    case .set:
      let action = state.set(on: thread)
      switch reference.deliverer {
      case nil:
        #expect(action == .deliver, Comment(rawValue: context))
        reference.deliverer = thread
      case thread:
        #expect(action == .enqueue, Comment(rawValue: context))
      default:
        #expect(action == .enqueueAndWait, Comment(rawValue: context))
      }
    case .register, .registerWithInitial:
      let sendsInitial = event == .registerWithInitial
      let action = state.register(on: thread, sendsInitial: sendsInitial)
      switch reference.deliverer {
      case nil:
        let queued = reference.gates.values.reduce(0, +) > 0
        let expected: DeliveryState.RegistrationAction =
          sendsInitial ? .enqueueGated : (queued ? .enqueue : .append)
        #expect(action == expected, Comment(rawValue: context))
        if sendsInitial { reference.gates[thread, default: 0] += 1 }
      case thread:
        #expect(action == .enqueue, Comment(rawValue: context))
      default:
        #expect(action == (sendsInitial ? .enqueueGated : .enqueue), Comment(rawValue: context))
        if sendsInitial { reference.gates[thread, default: 0] += 1 }
      }
    case .remove:
      let action = state.remove(on: thread)
      switch reference.deliverer {
      case nil: #expect(action == .removeNow, Comment(rawValue: context))
      case thread: #expect(action == .mark, Comment(rawValue: context))
      default: #expect(action == .deferToNextRound, Comment(rawValue: context))
      }
    case .openGate:
      let missedRounds = reference.gates.count % 2 == 0
      let action = state.openGate(on: thread, missedRounds: missedRounds)
      reference.gates[thread, default: 0] -= 1
      if reference.deliverer == nil && !missedRounds {
        #expect(action == .applyRegistrations, Comment(rawValue: context))
      } else if reference.deliverer == nil {
        #expect(action == .catchUp, Comment(rawValue: context))
        reference.deliverer = thread
      } else {
        #expect(action == .leaveToDeliverer, Comment(rawValue: context))
      }
    case .finish:
      state.finish(on: thread)
      reference.deliverer = nil
    case .handOver:
      // To the next thread, as when the queue's head is that thread's change.
      let next = Self.threads.first { $0 != thread }!
      state.handOver(from: thread, to: next)
      reference.deliverer = next
    case .handOverToQueue:
      state.handOverToQueue(from: thread)
      reference.deliverer = .deliveryQueue
    case .adoptQueuedRole:
      state.adoptQueuedRole(on: thread)
      reference.deliverer = thread
    }
    let expectedRole: DeliveryState.Role = reference.deliverer.map { .delivering($0) } ?? .idle
    #expect(state.role == expectedRole, Comment(rawValue: context))
    #expect(state.closedGates == reference.gates.values.reduce(0, +), Comment(rawValue: context))
    for candidate in Self.threads {
      #expect(state.isDeliverer(candidate) == (reference.deliverer == candidate))
    }
  }

  @Test func onlyTheDelivererMayFinish() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      state.finish(on: ThreadID(raw: 2))
    }
  }

  @Test func anIdleObservableHasNoDelivererToFinish() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      state.finish(on: ThreadID(raw: 1))
    }
  }

  @Test func onlyTheDelivererMayHandOver() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      state.handOver(from: ThreadID(raw: 2), to: ThreadID(raw: 3))
    }
  }

  @Test func onlyTheDeliveryQueueMayAdoptAQueuedRole() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 2))
      state.adoptQueuedRole(on: ThreadID(raw: 3))
    }
  }

  @Test func aGateThatWasNeverClosedCannotBeOpened() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.openGate(on: ThreadID(raw: 1), missedRounds: true)
    }
  }
}
