import PropertyObservation
import Testing

/// `MainScheduler.Interval`: units, clamping and saturation, arithmetic, description.
@Suite struct MainSchedulerIntervalTests {
  @Test func theUnitsConvertIntoOneAnother() {
    #expect(MainScheduler.Interval.seconds(2) == .milliseconds(2_000))
    #expect(MainScheduler.Interval.milliseconds(3) == .microseconds(3_000))
    #expect(MainScheduler.Interval.microseconds(4) == .nanoseconds(4_000))
    #expect(MainScheduler.Interval.milliseconds(299) < .milliseconds(300))
  }

  @Test func aNegativeCountIsZeroAndAnOverlargeOneSaturates() {
    #expect(MainScheduler.Interval.seconds(-5) == .nanoseconds(0))
    #expect(MainScheduler.Interval.seconds(.max) == .nanoseconds(.max))
    #expect(MainScheduler.Interval.seconds(.max) + .seconds(1) == .seconds(.max))
    #expect(MainScheduler.Interval.milliseconds(100) - .milliseconds(300) == .nanoseconds(0))
    #expect(MainScheduler.Interval.milliseconds(300) - .milliseconds(100) == .milliseconds(200))
  }

  @Test func theDescriptionUsesTheLargestExactUnit() {
    #expect(MainScheduler.Interval.seconds(2).description == "2s")
    #expect(MainScheduler.Interval.milliseconds(300).description == "300ms")
    #expect(MainScheduler.Interval.microseconds(1_500).description == "1500us")
    #expect(MainScheduler.Interval.nanoseconds(7).description == "7ns")
    #expect(MainScheduler.Interval.nanoseconds(0).description == "0ns")
  }
}
