import Testing

@testable import PropertyObservation

/// The decisions left to one observable's state once the graph's turn serializes propagations:
/// re-entrance on the delivering thread, and registrations and removals from other threads.
@Suite("Delivery state")
struct DeliveryStateTests {
  private let setter = ThreadID(raw: 1)
  private let other = ThreadID(raw: 2)

  @Test func aSetOnAnIdleObservableDeliversAndOneInsideItsRoundIsQueued() {
    var state = DeliveryState()
    let first = state.set(on: setter)
    #expect(state.role == .delivering(setter))
    let inside = state.set(on: setter)
    state.finish(on: setter)
    #expect(state.role == .idle)
    let withWork = state.set(on: setter, queueIsEmpty: false)
    #expect([first, inside, withWork] == [.deliver, .enqueue, .enqueueAndDrain])
  }

  /// Only after a join that could not wait does another thread store while one delivers: the
  /// change goes behind the round, for the deliverer, which keeps the role.
  @Test func aSetWhileAnotherThreadDeliversIsQueuedForTheDeliverer() {
    var state = DeliveryState()
    _ = state.set(on: setter)
    let action = state.set(on: other)
    #expect(action == .enqueue)
    #expect(state.role == .delivering(setter))
  }

  @Test func registrationsJoinAtOnceOnlyWhileNoRoundRuns() {
    var state = DeliveryState()
    var actions = [state.register(on: other, sendsInitial: false)]
    actions.append(state.register(on: other, sendsInitial: true))
    #expect(state.role == .delivering(other))
    actions.append(state.register(on: other, sendsInitial: true))
    actions.append(state.register(on: setter, sendsInitial: false))
    #expect(actions == [.append, .enqueueAndDeliverInitial, .enqueue, .enqueue])
  }

  @Test func anInitialRegistrationOnAnIdleObservableJoinsAtOnceOnlyWithNothingQueued() {
    var empty = DeliveryState()
    #expect(
      empty.register(on: other, sendsInitial: true, queueIsEmpty: true)
        == .appendAndDeliverInitial)
    #expect(empty.role == .delivering(other))
    var queued = DeliveryState()
    #expect(
      queued.register(on: other, sendsInitial: true, queueIsEmpty: false)
        == .enqueueAndDeliverInitial)
    #expect(queued.role == .delivering(other))
    // A round runs: the entry waits behind it, whatever the queue holds.
    #expect(
      queued.register(on: other, sendsInitial: true, queueIsEmpty: true) == .enqueue)
  }

  @Test func removalsTakeEffectAtOnceMarkedOrAtTheNextRound() {
    var state = DeliveryState()
    #expect(state.remove(on: other) == .removeNow)
    _ = state.set(on: setter)
    #expect(state.remove(on: setter) == .mark)
    #expect(state.remove(on: other) == .deferToNextRound)
  }

  @Test func onlyTheDelivererFinishes() async {
    await #expect(processExitsWith: .failure) {
      var state = DeliveryState()
      _ = state.set(on: ThreadID(raw: 1))
      state.finish(on: ThreadID(raw: 2))
    }
  }
}
