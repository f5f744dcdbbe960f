import Foundation
import TestSupport
import Testing

@testable import PropertyObservation

/// The one unsafe step of the library (`CallbackIsolation.synchronous(_:)`) reinterprets an
/// `@isolated(any) @Sendable` function as the synchronous function type the delivery loop calls.
/// These tests pin what it relies on, so that a toolchain that changes the representation fails
/// here (CI runs them in debug, release and ThreadSanitizer builds) instead of corrupting memory.
@Suite("The representation of isolated closures")
struct IsolatedClosureRepresentationTests {
  typealias Isolated<Value> = @isolated(any) @Sendable (Value, ObservableOptions) -> Void
  typealias Synchronous<Value> = (Value, ObservableOptions) -> Void

  @Test func anIsolatedClosureHasTheSizeOfASynchronousOne() {
    #expect(MemoryLayout<Isolated<Int>>.size == MemoryLayout<Synchronous<Int>>.size)
    #expect(MemoryLayout<Isolated<String>>.size == MemoryLayout<Synchronous<String>>.size)
    #expect(
      MemoryLayout<@isolated(any) @Sendable (Int, String) -> Void>.size
        == MemoryLayout<(Int, String) -> Void>.size)
    #expect(MemoryLayout<Isolated<Int>>.size == 2 * MemoryLayout<Int>.size)
    // The boxes the conversion reads as their twins.
    #expect(
      MemoryLayout<IsolatedCallback<String>>.size == MemoryLayout<SynchronousCallback<String>>.size)
    #expect(
      MemoryLayout<IsolatedOwnedCallback<AnyObject, Int>>.size
        == MemoryLayout<SynchronousOwnedCallback<AnyObject, Int>>.size)
    #expect(
      MemoryLayout<IsolatedHandler<[Int]>>.stride == MemoryLayout<SynchronousHandler<[Int]>>.stride)
  }

  @Test func aCallThroughTheConversionReceivesItsArgumentsAndCaptures() {
    let received = RecordingLog<String>()
    let suffix = "!"
    let closure: Isolated<[Int]> = { value, option in
      received.append("\(value) \(option == .new ? "new" : "other")\(suffix)")
    }
    let call = CallbackIsolation.synchronous(closure)
    call([1, 2, 3], .new)
    call([], .old)
    #expect(received.events == ["[1, 2, 3] new!", "[] other!"])
  }

  @Test func aLargeValueAndAGenericContextSurviveTheConversion() {
    struct Wide: Equatable {
      var numbers = (1, 2, 3, 4, 5)
      var text = "wide"
      static func == (lhs: Wide, rhs: Wide) -> Bool {
        lhs.numbers == rhs.numbers && lhs.text == rhs.text
      }
    }
    func forward<Value: Sendable>(_ value: Value, into log: RecordingLog<Value>) {
      let closure: Isolated<Value> = { value, _ in log.append(value) }
      CallbackIsolation.synchronous(closure)(value, .new)
    }
    let log = RecordingLog<String>()
    forward("generic", into: log)
    #expect(log.events == ["generic"])
    let observable = Observable(Wide())
    let seen = RecordingLog<String>()
    let token = observable.observe(options: [.initial, .new]) { value, _ in
      seen.append("\(value.numbers.4) \(value.text)")
    }
    observable.value = Wide(numbers: (6, 7, 8, 9, 10), text: "wider")
    #expect(seen.events == ["5 wide", "10 wider"])
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func aMainActorClosureReportsItsIsolationAndRunsOnTheMainActor() {
    let closure: Isolated<Int> = { @MainActor _, _ in MainActor.assertIsolated() }
    #expect(closure.isolation === MainActor.shared)
    #expect(CallbackIsolation(of: closure.isolation, calledFrom: nil).isMainActor)
    let observable = Observable(0)
    let calls = RecordingLog<Int>()
    let token = observable.observe(options: [.initial, .new]) { value, _ in
      MainActor.assertIsolated()
      calls.append(value)
    }
    observable.value = 1
    #expect(calls.events == [0, 1])
    withExtendedLifetime(token) {}
  }

  @Test func aNonisolatedClosureReportsNoIsolationAndRunsOnTheSettingThread() async {
    let closure: Isolated<Int> = { _, _ in }
    #expect(closure.isolation == nil)
    let threads = await onItsOwnThread { () -> [Bool] in
      let observable = Observable(0)
      let onSettingThread = RecordingLog<Bool>()
      let setter = LockedValue<Thread?>(nil)
      let token = observable.observe { _, _ in
        onSettingThread.append(setter.value === Thread.current)
      }
      runInBackground {
        setter.value = Thread.current
        observable.value = 1
      }.waitUntilFinished("the setter")
      withExtendedLifetime(token) {}
      return onSettingThread.events
    }
    #expect(threads == [true])
  }
}

extension CallbackIsolation {
  fileprivate var isMainActor: Bool {
    if case .mainActor = self { return true }
    return false
  }
}
