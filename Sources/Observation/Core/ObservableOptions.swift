/// Which callbacks an observer receives from an ``Observable``.
///
/// Combine the options an observer needs; the closure's second argument names the single option
/// being delivered, so one closure can tell them apart:
///
/// ```swift
/// model.name.addObserver(self, options: [.initial, .old, .new]) { name, option in
///   switch option {
///   case .initial: print("starts as \(name)")
///   case .old: print("leaving \(name)")
///   default: print("now \(name)")
///   }
/// }
/// ```
///
/// An empty option set is accepted: such an observer is never called and is not kept. An
/// observer whose options hold only ``initial`` is called once, inside the registering call, and
/// is not kept either.
public struct ObservableOptions: OptionSet, Sendable, Hashable {
  /// The option's bit pattern: ``initial`` is `1 << 0`, ``old`` is `1 << 1`, ``new`` is `1 << 2`.
  public let rawValue: Int

  /// Creates an option set from its bit pattern; bits beyond the three options are ignored.
  ///
  /// - Parameter rawValue: The bits of ``initial``, ``old`` and ``new``.
  public init(rawValue: Int) {
    self.rawValue = rawValue
  }

  /// Deliver the current value once, synchronously, before the registering call returns.
  public static let initial = ObservableOptions(rawValue: 1 << 0)

  /// Deliver the previous value on every set, before any observer receives the new value.
  public static let old = ObservableOptions(rawValue: 1 << 1)

  /// Deliver the new value on every set, after every ``old`` callback of that set.
  public static let new = ObservableOptions(rawValue: 1 << 2)
}

extension ObservableOptions: CustomStringConvertible {
  /// The option names in brackets, for example `[.initial, .new]`.
  public var description: String {
    var names: [String] = []
    if contains(.initial) { names.append(".initial") }
    if contains(.old) { names.append(".old") }
    if contains(.new) { names.append(".new") }
    return "[" + names.joined(separator: ", ") + "]"
  }
}
