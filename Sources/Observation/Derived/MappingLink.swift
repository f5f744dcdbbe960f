/// The link of a `map` level: a ``DerivedLink`` that also holds the transform, so that the
/// level's step captures only the link and needs no closure context of its own (one heap
/// object fewer per level of a chain).
final class MappingLink<Source, Value>: DerivedLink<Value> {
  private let transform: (Source) -> Value

  /// - Parameters:
  ///   - ranking: The derived observable's rank, above the source's.
  ///   - upstream: The registration that will feed this link; the derived observable owns it.
  ///   - transform: The level's transform, called once per value the source delivers.
  init(
    ranking: DerivedRank, upstream: ObservationToken, transform: @escaping (Source) -> Value
  ) {
    self.transform = transform
    super.init(ranking: ranking, upstream: upstream)
  }

  /// Builds the derived observable from the transform of the `.initial` value, or sends the
  /// transform of a change to it.
  func receive(_ value: Source, _ option: ObservableOptions) {
    publish(transform(value), option)
  }
}
