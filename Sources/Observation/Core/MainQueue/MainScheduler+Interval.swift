extension MainScheduler {
  /// A length of time on a ``MainScheduler``: how long ``Driver/debounce(for:)`` waits, how long a
  /// ``Driver/throttle(for:latest:)`` window lasts, how far ``ManualScheduler/advance(by:)`` moves
  /// virtual time.
  ///
  /// ```swift
  /// let query = searchField.text.asDriver().debounce(for: .milliseconds(300))
  /// ```
  ///
  /// An interval counts whole nanoseconds, never fewer than zero: a negative count makes a zero
  /// interval, and a count too large to hold in nanoseconds makes the largest interval, about
  /// 292 years.
  ///
  /// The library has its own type because the others do not fit every platform it supports:
  /// `Swift.Duration` needs iOS 16 and macOS 13, and `DispatchTimeInterval` has a `never` case
  /// that means nothing here, cannot be compared, and counts nanoseconds in an `Int`, which on
  /// 32-bit watchOS holds only about two seconds.
  public struct Interval: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The length in nanoseconds; never negative.
    let nanoseconds: Int64

    private init(count: Int, nanosecondsPerUnit: Int64) {
      let (product, overflow) = Int64(max(count, 0)).multipliedReportingOverflow(
        by: nanosecondsPerUnit)
      nanoseconds = overflow ? .max : product
    }

    init(nanoseconds: Int64) {
      self.nanoseconds = max(nanoseconds, 0)
    }

    /// An interval of `seconds` seconds.
    ///
    /// - Parameter seconds: The number of seconds; a negative number counts as zero.
    /// - Returns: The interval.
    public static func seconds(_ seconds: Int) -> Interval {
      Interval(count: seconds, nanosecondsPerUnit: 1_000_000_000)
    }

    /// An interval of `milliseconds` thousandths of a second.
    ///
    /// - Parameter milliseconds: The number of milliseconds; a negative number counts as zero.
    /// - Returns: The interval.
    public static func milliseconds(_ milliseconds: Int) -> Interval {
      Interval(count: milliseconds, nanosecondsPerUnit: 1_000_000)
    }

    /// An interval of `microseconds` millionths of a second.
    ///
    /// - Parameter microseconds: The number of microseconds; a negative number counts as zero.
    /// - Returns: The interval.
    public static func microseconds(_ microseconds: Int) -> Interval {
      Interval(count: microseconds, nanosecondsPerUnit: 1_000)
    }

    /// An interval of `nanoseconds` billionths of a second.
    ///
    /// - Parameter nanoseconds: The number of nanoseconds; a negative number counts as zero.
    /// - Returns: The interval.
    public static func nanoseconds(_ nanoseconds: Int) -> Interval {
      Interval(count: nanoseconds, nanosecondsPerUnit: 1)
    }

    /// Whether `lhs` is shorter than `rhs`.
    ///
    /// - Parameters:
    ///   - lhs: An interval.
    ///   - rhs: Another interval.
    /// - Returns: `true` when `lhs` is the shorter one.
    public static func < (lhs: Interval, rhs: Interval) -> Bool {
      lhs.nanoseconds < rhs.nanoseconds
    }

    /// The sum of two intervals, or the largest interval if the sum is too large.
    ///
    /// - Parameters:
    ///   - lhs: An interval.
    ///   - rhs: The interval to add.
    /// - Returns: The total length.
    public static func + (lhs: Interval, rhs: Interval) -> Interval {
      let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.nanoseconds)
      return Interval(nanoseconds: overflow ? .max : sum)
    }

    /// How much longer `lhs` is than `rhs`, or a zero interval if it is not longer.
    ///
    /// ```swift
    /// let waited = main.elapsedTime - start
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: An interval.
    ///   - rhs: The interval to take away.
    /// - Returns: The difference, never negative.
    public static func - (lhs: Interval, rhs: Interval) -> Interval {
      Interval(nanoseconds: lhs.nanoseconds - rhs.nanoseconds)
    }

    /// The interval in the largest unit that measures it exactly: `300ms`, `2s`, `1500us`.
    public var description: String {
      for (unit, nanosecondsPerUnit) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)]
      where nanoseconds != 0 && nanoseconds % Int64(nanosecondsPerUnit) == 0 {
        return "\(nanoseconds / Int64(nanosecondsPerUnit))\(unit)"
      }
      return "\(nanoseconds)ns"
    }
  }
}
