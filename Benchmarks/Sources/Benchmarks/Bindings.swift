import OpenCombine
import PropertyObservation

/// The object a binding writes to: a stand-in for a label, whose property does the same small
/// work in every column when it is set.
///
/// `@unchecked Sendable`: bindings write it on the delivering thread, one call at a time, and the
/// run reads `total` after its sets returned.
final class BindingTarget: @unchecked Sendable {
  var total = 0
  var value = 0 {
    didSet { total &+= value }
  }
}

/// Per set, a derived chain `map { $0 / 2 } → removeDuplicates() → bind(to: target, \.value)`,
/// against the same logic written by hand in one closure, and OpenCombine's
/// `map → removeDuplicates → assign(to:on:)`. Half the sets are duplicates after the `map`.
///
/// The unit is one set of the source.
func derivedChainContenders() -> [Contender] {
  var contenders: [Contender] = []

  do {
    let target = BindingTarget()
    let source = Observable(0)
    // One writer at a time (the library's calls), as `Accumulator`.
    final class Last: @unchecked Sendable { var value = 0 }
    let last = Last()
    source.observe(with: target, options: [.initial, .new]) { target, value in
      let half = value / 2
      if half != last.value {
        last.value = half
        target.value = half
      }
    }
    contenders.append(
      Contender(Column.handWritten, unitsPerIteration: 1, checksum: { target.total }) {
        iterations in
        for value in 0..<iterations { source.value = value }
      })
  }

  // The same closure writing through the key path, to separate the standard library's key-path
  // write (which allocates a holder per write) from the cost of the chain itself.
  contenders += keyPathChainContenders(
    target: BindingTarget(), \.value, checksum: { $0.total })

  do {
    let target = BindingTarget()
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellable = subject.map { $0 / 2 }.removeDuplicates().assign(to: \.value, on: target)
    contenders.append(combineContender(sending: subject, into: target, keeping: cancellable))
  }
  return contenders
}

/// A target whose property has no observers: writing it through a key path is a stored-property
/// write, which allocates nothing (a property with `didSet`, like `BindingTarget`'s, makes the
/// standard library allocate a write-back buffer per key-path write).
/// `@unchecked Sendable` for the reason `BindingTarget` is.
final class StoredPropertyTarget: @unchecked Sendable {
  var value = 0
}

/// The derived chain and the same key-path write by hand, into a ``StoredPropertyTarget``: for
/// counting what the chain itself allocates per set.
func storedPropertyChainContenders() -> [Contender] {
  keyPathChainContenders(target: StoredPropertyTarget(), \.value, checksum: { $0.value })
}

/// The chain's key-path columns for one kind of target: the hand-written closure writing through
/// `keyPath`, and the library's `map → removeDuplicates → bind(to:)`. Each column gets its own
/// target (`target` is an autoclosure).
private func keyPathChainContenders<Target: AnyObject & Sendable>(
  target makeTarget: @autoclosure () -> Target,
  _ keyPath: ReferenceWritableKeyPath<Target, Int> & Sendable,
  checksum: @escaping (Target) -> Int
) -> [Contender] {
  var contenders: [Contender] = []
  do {
    let target = makeTarget()
    let source = Observable(0)
    let last = LastHalf()
    source.observe(with: target, options: [.initial, .new]) { target, value in
      let half = value / 2
      if half != last.value {
        last.value = half
        target[keyPath: keyPath] = half
      }
    }
    contenders.append(
      Contender(Column.handWrittenKeyPath, unitsPerIteration: 1, checksum: { checksum(target) }) {
        iterations in
        for value in 0..<iterations { source.value = value }
      })
  }
  do {
    let target = makeTarget()
    let source = Observable(0)
    let binding = source.map { $0 / 2 }.removeDuplicates().bind(to: target, keyPath)
    contenders.append(
      Contender(
        Column.libraryBinding, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(binding) { checksum(target) } }
      ) { iterations in
        for value in 0..<iterations { source.value = value }
      })
  }
  return contenders
}

/// Per set, a key-path binding `bind(to: target, \.value)` against a hand-written
/// `observe(with: target) { $0.value = $1 }` and OpenCombine's `assign(to:on:)`.
///
/// The unit is one set of the source.
func keyPathBindingContenders() -> [Contender] {
  var contenders: [Contender] = []

  do {
    let target = BindingTarget()
    let source = Observable(0)
    source.observe(with: target, options: [.initial, .new]) { target, value in
      target.value = value
    }
    contenders.append(
      Contender(Column.handWritten, unitsPerIteration: 1, checksum: { target.total }) {
        iterations in
        for value in 0..<iterations { source.value = value }
      })
  }

  do {
    let target = BindingTarget()
    let source = Observable(0)
    let keyPath: ReferenceWritableKeyPath<BindingTarget, Int> & Sendable = \.value
    source.observe(with: target, options: [.initial, .new]) { target, value in
      target[keyPath: keyPath] = value
    }
    contenders.append(
      Contender(Column.handWrittenKeyPath, unitsPerIteration: 1, checksum: { target.total }) {
        iterations in
        for value in 0..<iterations { source.value = value }
      })
  }

  do {
    let target = BindingTarget()
    let source = Observable(0)
    let binding = source.bind(to: target, \.value)
    contenders.append(
      Contender(
        Column.libraryBinding, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(binding) { target.total } }
      ) { iterations in
        for value in 0..<iterations { source.value = value }
      })
  }

  do {
    let target = BindingTarget()
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellable = subject.assign(to: \.value, on: target)
    contenders.append(combineContender(sending: subject, into: target, keeping: cancellable))
  }
  return contenders
}

/// The last value the hand-written chain wrote (its `removeDuplicates`).
/// One writer at a time (the library's calls), as `Accumulator`.
private final class LastHalf: @unchecked Sendable {
  var value = 0
}

/// OpenCombine's column of a binding row: each iteration sends to `subject`, whose pipeline
/// (kept alive by `cancellable`) writes into `target`.
func combineContender(
  sending subject: CurrentValueSubject<Int, Never>,
  into target: BindingTarget,
  keeping cancellable: AnyCancellable
) -> Contender {
  Contender(
    Column.combine, unitsPerIteration: 1,
    checksum: { withExtendedLifetime(cancellable) { target.total } },
    run: { iterations in
      for value in 0..<iterations { subject.send(value) }
    })
}
