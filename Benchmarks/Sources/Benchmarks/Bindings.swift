import OpenCombine
import PropertyObservation

/// The object a binding writes to: a stand-in for a label, whose property does the same small
/// work in every column when it is set.
final class BindingTarget {
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
    final class Last { var value = 0 }
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
  do {
    let target = BindingTarget()
    let source = Observable(0)
    final class Last { var value = 0 }
    let last = Last()
    let keyPath: ReferenceWritableKeyPath<BindingTarget, Int> = \.value
    source.observe(with: target, options: [.initial, .new]) { target, value in
      let half = value / 2
      if half != last.value {
        last.value = half
        target[keyPath: keyPath] = half
      }
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
    let binding = source.map { $0 / 2 }.removeDuplicates().bind(to: target, \.value)
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
    let cancellable = subject.map { $0 / 2 }.removeDuplicates().assign(to: \.value, on: target)
    contenders.append(
      Contender(
        Column.combine, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(cancellable) { target.total } }
      ) { iterations in
        for value in 0..<iterations { subject.send(value) }
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
    let keyPath: ReferenceWritableKeyPath<BindingTarget, Int> = \.value
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
    contenders.append(
      Contender(
        Column.combine, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(cancellable) { target.total } }
      ) { iterations in
        for value in 0..<iterations { subject.send(value) }
      })
  }
  return contenders
}
