/// A view that shows an array's elements as rows and animates changes in batches: what
/// ``ReadOnlyObservableArray/bind(to:reloadThreshold:)`` drives.
///
/// A `UITableView` or `UICollectionView` adapter implements it in a few lines (see
/// <doc:ObservingCollections>): ``reloadAll(_:)`` sets the data source and reloads; and
/// ``performBatch(_:)`` sets the data source to the batch's elements inside
/// `performBatchUpdates` and issues its reloads, deletions, insertions and moves.
@MainActor
public protocol BatchUpdateTarget: AnyObject {
  /// The type of the rows' data.
  associatedtype Element

  /// Replaces every row: set the data source to `elements` and reload the view.
  ///
  /// - Parameter elements: The rows' data from now on.
  func reloadAll(_ elements: [Element])

  /// Applies one batch: inside the view's batch update, set the data source to
  /// `batch.elements`, then reload, delete, insert and move the batch's rows.
  ///
  /// - Parameter batch: Offsets valid for the data before the batch (reloads, deletions, move
  ///   sources) and after it (insertions, move targets), as UIKit expects.
  func performBatch(_ batch: BatchUpdate<Element>)
}

extension ReadOnlyObservableArray {
  /// Shows this array in `target`, on the main actor: all rows at once, then each change set as
  /// batches the view can animate.
  ///
  /// The first call happens inside this one (``BatchUpdateTarget/reloadAll(_:)`` with the
  /// current elements). Each later change set is split into batches with
  /// ``ArrayChangeSet/batchUpdates(from:)`` and passed to ``BatchUpdateTarget/performBatch(_:)``
  /// one after the other; a reset (``ArrayChangeSet/isReset``) or a change set with more than
  /// `reloadThreshold` changes reloads everything instead, and an empty one does nothing.
  ///
  /// ```swift
  /// todos.bind(to: tableAdapter)
  /// ```
  ///
  /// The target is held weakly and owns the binding, which ends when the target goes or with
  /// `removeObserver(target)`. The binding keeps a derived array (from ``map(_:)`` or
  /// ``filter(_:)``) alive while it lasts, so a list built inline in the call keeps updating
  /// the target; it is released at the array's next change after the target is gone. Binding the same target again replaces the earlier binding (and
  /// the target's other `addObserver` registrations on this array). Change sets made on other
  /// threads reach the target on the main actor, in order.
  ///
  /// - Parameters:
  ///   - target: The view to update, held weakly.
  ///   - reloadThreshold: The largest number of changes (removals, insertions, moves and
  ///     updates) animated as batches; 100 by default.
  @MainActor
  public func bind<Target: BatchUpdateTarget>(to target: Target, reloadThreshold: Int = 100)
  where Target.Element == Element {
    // The elements the target shows: the old data the next change set's batches start from.
    // The array handed to the target, not a snapshot, so that the binding does not keep the
    // array's storage shared (which would make each edit copy it).
    let shown = ShownElements<Element>()
    // The registration keeps a derived array (whose only owners are its users) alive, as a
    // key-path binding keeps a derived observable: a list built inline in the call lives as long
    // as the target. The cycle through the array's own observers ends with the registration.
    let chain = keptAliveByObservers
    let start = RegistrationStart(array: self)
    changes.addObserver(target, options: [.initial, .new]) { [weak target] change, option in
      withExtendedLifetime(chain) {}
      guard let target, let change = start.filter(change, option) else { return }
      guard option != .initial, let old = shown.elements, !change.isReset,
        change.changeCount <= reloadThreshold
      else {
        let elements = Array(change.elements)
        shown.elements = elements
        return target.reloadAll(elements)
      }
      for batch in change.batchUpdates(fromArray: old) {
        shown.elements = batch.elements
        target.performBatch(batch)
      }
    }
  }
}

/// The last elements a binding showed; only the binding's main-actor callback touches it.
private final class ShownElements<Element> {
  var elements: [Element]?
}
