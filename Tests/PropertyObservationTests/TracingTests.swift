import PropertyObservation
import TestSupport
import Testing

@Suite("Tracing the rounds of an observable")
struct TracingTests {
  @Test func eachRoundIsReportedWithItsValuesCallbacksAndPrunedOwners() {
    let name = Observable("Madeline")
    let reports = RecordingLog<String>()
    let keeper = Owner()
    name.addObserver(keeper, options: [.old, .new]) { _, _ in }
    do {
      let shortLived = Owner()
      name.addObserver(shortLived) { _, _ in }
      name.trace(as: "user.name") { reports.append($0.description) }
      name.value = "Amelia"
    }
    name.value = "Ray"
    #expect(
      reports.events == [
        "user.name: Madeline → Amelia (3 callbacks, 0 pruned)",
        "user.name: Amelia → Ray (2 callbacks, 1 pruned)",
      ])
  }

  @Test func nestedSetsAreReportedAsTheirOwnRoundsAfterTheOuterOne() {
    let counter = Observable(0)
    let reports = RecordingLog<RoundTrace>()
    let token = counter.observe { value, _ in if value == 1 { counter.value = 2 } }
    counter.trace(as: "counter") { reports.append($0) }
    counter.value = 1
    #expect(reports.events.map(\.newValue) == ["1", "2"])
    #expect(reports.events.map(\.oldValue) == ["0", "1"])
    #expect(reports.events.allSatisfy { $0.callbackCount == 1 && $0.prunedCount == 0 })
    #expect(reports.events.first?.description == "counter: 0 → 1 (1 callback, 0 pruned)")
    withExtendedLifetime(token) {}
  }

  @Test func stoppingTracingStopsTheReports() {
    let counter = Observable(0)
    let reports = RecordingLog<RoundTrace>()
    counter.trace(as: "counter") { reports.append($0) }
    counter.value = 1
    counter.stopTracing()
    counter.value = 2
    #expect(reports.events.map(\.newValue) == ["1"])
  }
}
