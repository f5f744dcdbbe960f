/// The observable that ``ReadOnlyObservableArray/element(withID:)`` returns: one element of an
/// array, followed by its offset through the array's change sets.
///
/// Its registration on the array's change sets calls `follow(_:)` one change set at a time,
/// `.initial` first, so `offset` needs no lock. It owns that registration and keeps the array
/// alive; it lives as long as its users hold it.
final class ElementByID<Element: Identifiable>: ReadOnlyObservable<Element?> {
  private let id: Element.ID
  private var upstream: ObservationToken?
  /// The array, kept alive: a derived one ends its own registrations when it goes.
  private let array: AnyObject
  /// The element's offset in the array; `nil` once it has ended.
  private var offset: Int?

  private init(id: Element.ID, array: AnyObject) {
    self.id = id
    self.array = array
    super.init(initialValue: nil)
  }

  static func make(
    following id: Element.ID, in array: ReadOnlyObservableArray<Element>
  ) -> ElementByID<Element> {
    let observable = ElementByID(id: id, array: array)
    let token = ObservationToken(source: array.changes)
    // Where the registration starts: the array's elements, and no change set they include.
    let start = RegistrationStart(array: array)
    let callback: (ArrayChangeSet<Element>, ObservableOptions) -> Void = {
      [weak observable] change, option in
      guard let change = start.filter(change, option) else { return }
      observable?.follow(change, isInitial: option == .initial)
    }
    observable.upstream = token
    array.changes.register(
      .init(token: token, options: [.initial, .new], callback: callback),
      replacing: false, initial: callback, sendsInitial: true)
    return observable
  }

  private func follow(_ change: ArrayChangeSet<Element>, isInitial: Bool) {
    if isInitial || change.isReset {
      guard isInitial || offset != nil else { return }
      offset = change.elements.firstIndex { $0.id == id }
      return send(offset.map { change.elements[$0] })
    }
    guard let old = offset else { return }
    guard let new = change.newOffset(of: old) else { return end() }
    offset = new
    guard change.isUpdated(at: new) else { return }
    let element = change.elements[new]
    guard element.id == id else { return end() }
    send(element)
  }

  /// The element was removed (or replaced by another): deliver `nil`, once, and stop following.
  private func end() {
    offset = nil
    upstream?.cancel()
    upstream = nil
    send(nil)
  }
}

// Its value lives in `ReadOnlyObservable`, guarded by its lock; `offset` and `upstream` are
// touched only by `make` (before registering) and by its registration's calls, one at a time,
// which alone read the `let` `id`; `array` is only held.
extension ElementByID: @unchecked Sendable where Element: Sendable {}

extension ArrayChangeSet {
  /// The offset after this change of the element at `old` before it, or `nil` if the change
  /// removed it.
  ///
  /// - Complexity: O(*k*) for *k* insertions and moves, plus O(log *k*) for the removals.
  func newOffset(of old: Int) -> Int? {
    guard !removals.binarySearchContains(old) else { return nil }
    var movedBefore = 0
    for move in moves {
      if move.old == old { return move.new }
      if move.old < old { movedBefore += 1 }
    }
    // The elements that stayed keep their order: the element is the rank-th of them, and the
    // rank-th offset after the change that is neither inserted nor a move target.
    let rank = old - removals.countLess(than: old) - movedBefore
    var new = rank
    var insertion = 0
    var move = 0
    while true {
      let nextInsertion = insertion < insertions.count ? insertions[insertion] : Int.max
      let nextTarget = move < moves.count ? moves[move].new : Int.max
      let taken = min(nextInsertion, nextTarget)
      guard taken <= new else { return new }
      new += 1
      if nextInsertion <= nextTarget { insertion += 1 } else { move += 1 }
    }
  }
}

extension ArrayChangeSet {
  /// Whether the change updated the element at `new`, an offset after it.
  ///
  /// - Complexity: O(log *k*) for *k* updates.
  func isUpdated(at new: Int) -> Bool {
    var low = 0
    var high = updates.count
    while low < high {
      let middle = (low + high) / 2
      if updates[middle].new < new { low = middle + 1 } else { high = middle }
    }
    return low < updates.count && updates[low].new == new
  }
}

extension [Int] {
  /// How many elements of this ascending array are less than `value`: a binary search, shared
  /// with the staging of batch updates.
  func countLess(than value: Int) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if self[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Whether this ascending array holds `value`.
  fileprivate func binarySearchContains(_ value: Int) -> Bool {
    let index = countLess(than: value)
    return index < count && self[index] == value
  }
}
