/// The link of a `map` level: a ``DerivedLink`` that also holds the transform, so that the
/// level's step captures only the link and needs no closure context of its own (one heap
/// object fewer per level of a chain).
final class MappingLink<Source, Value>: DerivedLink<Value> {
  private let transform: @Sendable (Source) -> Value

  /// - Parameters:
  ///   - source: The observable the link's registration is made on.
  ///   - transform: The level's transform, called once per value the source delivers.
  init(source: ReadOnlyObservable<Source>, transform: @escaping @Sendable (Source) -> Value) {
    self.transform = transform
    super.init(source: source)
  }

  /// Builds the derived observable from the transform of the `.initial` value, or sends the
  /// transform of a change to it.
  func receive(_ value: Source, _ option: ObservableOptions) {
    publish(transform(value), option)
  }
}

// Restated because Swift requires it of a subclass of an `@unchecked Sendable` class: the link's
// own state is a `let` of a `@Sendable` transform, which needs no lock; what it inherits is
// `DerivedLink`'s.
extension MappingLink: @unchecked Sendable {}
