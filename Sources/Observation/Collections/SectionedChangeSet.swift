/// One change of an ``ObservableSectionedArray``: the batches a sectioned table view applies one
/// after the other, and the sections right after the change.
///
/// Each of ``stages`` is a ``SectionedBatchUpdate`` that UIKit's `performBatchUpdates` accepts on
/// its own, with the data the data source holds once it is applied; applied in order, they lead
/// from the sections before the change to ``sections``. A change needs several stages when one
/// batch cannot express it (an item reloaded and moved, say), as DifferenceKit's
/// `StagedChangeset` does. Stages come in this order, each left out when empty: item reloads
/// with section and item deletions; section insertions and moves; item insertions and moves
/// (within and across sections); section reloads.
///
/// A reset (``isReset``) relates nothing: it has no stages, and a view shows ``sections`` afresh.
/// `.initial` delivers one, and so does a change an observer could not follow step by step (the
/// merged changes of a transaction).
///
/// ```swift
/// let token = lists.observe(options: [.initial, .new]) { changes in
///   if changes.isReset { print("reload", changes.sections.count) }
///   for stage in changes.stages { print(stage) }
/// }
/// ```
public struct SectionedChangeSet<Section, Item> {
  /// The batches that lead from the sections before the change to ``sections``, in order;
  /// empty for a reset.
  public let stages: [SectionedBatchUpdate<Section, Item>]
  /// The sections right after the change.
  public let sections: [ArraySection<Section, Item>]
  /// Whether this change set relates nothing to what came before: show ``sections`` afresh.
  public let isReset: Bool
  /// The owning list's count of changes once this one was made.
  let version: UInt
  /// The version of the sections this change starts from.
  let baseVersion: UInt

  init(
    stages: [SectionedBatchUpdate<Section, Item>], sections: [ArraySection<Section, Item>],
    isReset: Bool, version: UInt, baseVersion: UInt
  ) {
    self.stages = stages
    self.sections = sections
    self.isReset = isReset
    self.version = version
    self.baseVersion = baseVersion
  }

  /// A reset to `sections`, at `version`.
  static func reset(to sections: [ArraySection<Section, Item>], version: UInt) -> Self {
    Self(stages: [], sections: sections, isReset: true, version: version, baseVersion: version)
  }

  /// Whether nothing changed: no stages, and not a reset.
  public var isEmpty: Bool { !isReset && stages.isEmpty }
}

// The stored properties are values; they are Sendable when the sections' parts are.
extension SectionedChangeSet: Sendable where Section: Sendable, Item: Sendable {}

extension SectionedChangeSet: CustomStringConvertible {
  /// A one-line summary, for logs: `reset(2 sections)`, or the stages separated by ` | `.
  public var description: String {
    if isReset { return "reset(\(sections.count) sections)" }
    if stages.isEmpty { return "no change" }
    return stages.map(\.description).joined(separator: " | ")
  }
}
