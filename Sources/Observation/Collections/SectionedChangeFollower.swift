/// What one registration on a sectioned list's change sets has seen: the version its last
/// change set left the sections at. A change set that does not start there (the registration
/// missed the ones in between, merged by a transaction) is delivered as a reset. Every
/// registration takes `.initial` from the core, to learn where it starts; the follower passes it
/// on only when the observer asked for it. An edit that changed nothing (no stages) is stored but
/// not passed on. The core calls it one call at a time.
final class SectionedChangeFollower<Section, Item> {
  private var version: UInt?
  private let deliversInitial: Bool

  init(options: ObservableOptions) {
    deliversInitial = options.contains(.initial)
  }

  /// The change set to deliver for `change`, received with `option`, or `nil` for none.
  func follow(
    _ change: SectionedChangeSet<Section, Item>, _ option: ObservableOptions
  ) -> SectionedChangeSet<Section, Item>? {
    defer { version = change.version }
    if option == .initial {
      return deliversInitial ? .reset(to: change.sections, version: change.version) : nil
    }
    guard let version, change.baseVersion == version, !change.isReset else {
      return .reset(to: change.sections, version: change.version)
    }
    return change.stages.isEmpty ? nil : change
  }
}
