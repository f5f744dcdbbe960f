public import PropertyObservation

extension ObservationRecorder {
  /// One delivery the recorder saw: which source (a label), which option, which value.
  ///
  /// Write expected events with the factory methods named after the options, so that an
  /// expected log reads like the callbacks it describes:
  ///
  /// ```swift
  /// #expect(recorder.events == [
  ///   .initial("name", "Madeline"),
  ///   .old("name", "Madeline"),
  ///   .new("name", "Amelia"),
  /// ])
  /// ```
  ///
  /// Two events are equal when their labels and options are equal and their values have the same
  /// type and are equal. The type matters: `.new("ratio", 2)` records an `Int` and never equals
  /// a delivery of the `Double` `2.0`, so write `2.0` for a `Double` observable (the description
  /// of a ``ObservationRecorder/difference(from:)`` names the types when only they differ).
  public struct Event: Equatable, Sendable, CustomStringConvertible {
    /// The label given to ``ObservationRecorder/record(_:as:options:)`` or to
    /// ``ObservationRecorder/sink(_:option:)``, naming the source.
    public let label: String

    /// The single option the value was delivered with: `.initial`, `.old` or `.new`.
    public let option: ObservableOptions

    /// The delivered value, or what the recording's transform made of it.
    public let value: any Equatable & Sendable

    /// Creates an event with any option.
    ///
    /// - Parameters:
    ///   - label: The name of the source.
    ///   - option: The option the value was delivered with.
    ///   - value: The delivered value.
    public init(_ label: String, _ option: ObservableOptions, _ value: some Equatable & Sendable) {
      self.label = label
      self.option = option
      self.value = value
    }

    /// An `.initial` delivery of `value` from the source named `label`.
    ///
    /// - Parameters:
    ///   - label: The name of the source.
    ///   - value: The value delivered at registration.
    /// - Returns: The event.
    public static func initial(_ label: String, _ value: some Equatable & Sendable) -> Event {
      Event(label, .initial, value)
    }

    /// An `.old` delivery of `value` (the value being replaced) from the source named `label`.
    ///
    /// - Parameters:
    ///   - label: The name of the source.
    ///   - value: The previous value.
    /// - Returns: The event.
    public static func old(_ label: String, _ value: some Equatable & Sendable) -> Event {
      Event(label, .old, value)
    }

    /// A `.new` delivery of `value` from the source named `label`.
    ///
    /// - Parameters:
    ///   - label: The name of the source.
    ///   - value: The new value.
    /// - Returns: The event.
    public static func new(_ label: String, _ value: some Equatable & Sendable) -> Event {
      Event(label, .new, value)
    }

    /// Whether two events have the same label, option, value type and value.
    ///
    /// - Parameters:
    ///   - lhs: An event.
    ///   - rhs: Another event.
    /// - Returns: `true` when the events are the same delivery.
    public static func == (lhs: Event, rhs: Event) -> Bool {
      lhs.label == rhs.label && lhs.option == rhs.option && isEqual(lhs.value, rhs.value)
    }

    /// The event as it is written in Swift, for example `.new("name", "Amelia")`, so that a
    /// failing comparison can be pasted into the expected log.
    public var description: String {
      let label = String(reflecting: self.label)
      let value = String(reflecting: self.value)
      switch option {
      case .initial: return ".initial(\(label), \(value))"
      case .old: return ".old(\(label), \(value))"
      case .new: return ".new(\(label), \(value))"
      default: return "Event(\(label), \(option), \(value))"
      }
    }

    /// The name of the value's type, shown where two events differ only in it.
    var valueTypeName: String {
      String(describing: type(of: value))
    }
  }
}

/// Compares a value with a value of unknown type: equal only if `rhs` has the type of `lhs`.
private func isEqual<Left: Equatable>(_ lhs: Left, _ rhs: any Equatable & Sendable) -> Bool {
  guard let rhs = rhs as? Left else { return false }
  return lhs == rhs
}
