/// A view that shows sections of rows and animates changes in batches: what
/// ``ObservableSectionedArray/bind(to:)`` drives.
///
/// A sectioned `UITableView` or `UICollectionView` adapter implements it in a few lines:
/// ``reloadAll(_:)`` sets the data source and reloads; ``performBatch(_:)`` sets the data source
/// to the batch's sections inside `performBatchUpdates` and issues its section and item changes:
///
/// ```swift
/// final class TodoTable: SectionedBatchUpdateTarget {
///   var data: [ArraySection<TodoList, Todo>] = []
///   func reloadAll(_ sections: [ArraySection<TodoList, Todo>]) {
///     data = sections  // then tableView.reloadData()
///   }
///   func performBatch(_ batch: SectionedBatchUpdate<TodoList, Todo>) {
///     data = batch.sections  // inside tableView.performBatchUpdates, with the batch's changes
///   }
/// }
/// ```
@MainActor
public protocol SectionedBatchUpdateTarget: AnyObject {
  /// The type of the sections' own values.
  associatedtype Section
  /// The type of the rows' data.
  associatedtype Item

  /// Replaces every section and row: set the data source to `sections` and reload the view.
  ///
  /// - Parameter sections: The sections from now on.
  func reloadAll(_ sections: [ArraySection<Section, Item>])

  /// Applies one batch: inside the view's batch update, set the data source to
  /// `batch.sections`, then reload, delete, insert and move the batch's sections and items.
  ///
  /// - Parameter batch: Positions valid for the data before the batch (reloads, deletions, move
  ///   sources) and after it (insertions, move targets), as UIKit expects.
  func performBatch(_ batch: SectionedBatchUpdate<Section, Item>)
}

extension ObservableSectionedArray {
  /// Shows this list in `target`, on the main actor: all sections at once, then each change set
  /// as the batches of its ``SectionedChangeSet/stages``, one after the other.
  ///
  /// The first call happens inside this one (``SectionedBatchUpdateTarget/reloadAll(_:)`` with
  /// the current sections); a reset reloads everything again. Change sets made on other threads
  /// reach the target on the main actor, in order.
  ///
  /// ```swift
  /// lists.bind(to: todoTable)
  /// ```
  ///
  /// The target is held weakly and owns the binding, which ends when the target goes or with
  /// `removeObserver(target)`; binding the same target again replaces the earlier binding.
  ///
  /// - Parameter target: The view to update, held weakly.
  @MainActor
  public func bind<Target: SectionedBatchUpdateTarget>(to target: Target)
  where Target.Section == Section, Target.Item == Item {
    addObserver(target, options: [.initial, .new]) { [weak target] change in
      guard let target else { return }
      guard !change.isReset else { return target.reloadAll(change.sections) }
      for stage in change.stages { target.performBatch(stage) }
    }
  }
}
