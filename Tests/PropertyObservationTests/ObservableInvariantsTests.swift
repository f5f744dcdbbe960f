import Testing

@testable import PropertyObservation

/// The debug check of an observable's mirrors, which runs at the end of every drain: it must
/// stop the program when a mirror disagrees with the queue or the state it mirrors.
#if DEBUG
  @Suite("Observable invariants")
  struct ObservableInvariantsTests {
    @MainActor @Test func theCheckPassesAfterQueuedWorkWasDrained() {
      let observable = Observable(0)
      var seen: [Int] = []
      let token = observable.observe { value, _ in
        seen.append(value)
        if value == 1 { observable.value = 2 }
      }
      observable.value = 1
      observable.lock.withLock { observable._checkInvariants() }
      #expect(seen == [1, 2])
      withExtendedLifetime(token) {}
    }

    @Test func aMiscountedQueuedRegistrationStopsTheProgram() async {
      await #expect(processExitsWith: .failure) {
        let observable = Observable(0)
        observable.lock.withLock {
          observable.makeDeliveryIfNeeded().queuedRegistrationCount = 1
          observable._checkInvariants()
        }
      }
    }
  }
#endif
