import Dispatch
import PropertyObservation
import PropertyObservationTesting
import Testing

/// The examples of the "Testing callback order" article, so that the article cannot drift from
/// what the library does.
@Suite("Testing callback order article")
struct TestingCallbackOrderArticleTests {
  final class Profile {
    let name = Observable("Madeline")
    let greeting = Observable("Hello, Madeline")
    private var token: ObservationToken?

    init() {
      token = name.observe { [greeting] name, _ in
        greeting.value = "Hello, \(name)"
      }
    }
  }

  @Test func renamingUpdatesTheGreetingWithinTheSameRound() {
    let profile = Profile()
    let recorder = ObservationRecorder()
    recorder.record(profile.name, as: "name", options: [.initial, .old, .new])
    recorder.record(profile.greeting, as: "greeting")

    profile.name.value = "Amelia"

    #expect(
      recorder.events == [
        .initial("name", "Madeline"),
        .initial("greeting", "Hello, Madeline"),
        .old("name", "Madeline"),
        .new("greeting", "Hello, Amelia"),
        .new("name", "Amelia"),
      ])
  }

  @Test func backgroundSetsAreRecordedInOrder() async {
    let counter = Observable(0)
    let recorder = ObservationRecorder()
    recorder.record(counter, as: "counter", options: [.new])

    DispatchQueue.global().async {
      counter.value = 1
      counter.value = 2
    }

    #expect(await recorder.waitForEvents(count: 2))
    #expect(recorder.events == [.new("counter", 1), .new("counter", 2)])
  }

  @Test func valuesArriveInOrder() async {
    let counter = Observable(0)
    var iterator = counter.values.makeAsyncIterator()
    counter.value = 1
    counter.value = 2
    #expect(await iterator.next() == 0)
    #expect(await iterator.next() == 1)
    #expect(await iterator.next() == 2)
  }
}
