import OpenCombine
import PropertyObservation

/// Per set of the selected source, `selection.flatMapLatest { sources[$0] } → bind(to:)`
/// against a hand-written closure on the selected source, the same closure writing through the
/// key path, and OpenCombine's `map → switchToLatest → assign(to:on:)`. The selection does not
/// change during the run: this is the hot path, a change of the followed observable.
///
/// The unit is one set of the selected source.
func flatMapLatestContenders() -> [Contender] {
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
    let sources = [Observable(0), Observable(0)]
    let selection = Observable(1)
    let binding = selection.flatMapLatest { sources[$0] }.bind(to: target, \.value)
    let source = sources[1]
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
    let subjects = [CurrentValueSubject<Int, Never>(0), CurrentValueSubject<Int, Never>(0)]
    let selection = CurrentValueSubject<Int, Never>(1)
    let cancellable = selection.map { subjects[$0] }.switchToLatest()
      .assign(to: \.value, on: target)
    contenders.append(combineContender(sending: subjects[1], into: target, keeping: cancellable))
  }
  return contenders
}

/// Per set of one of four sources, `combineLatest([four sources]).map { sum } → bind(to:)`
/// against a hand-written closure on each source that sums the four values, and the same closure
/// writing through the key path. OpenCombine 0.14 has no `combineLatest`, so its column is
/// empty. The sources are set in turn.
///
/// The unit is one set of a source.
func combineLatestArrayContenders() -> [Contender] {
  var contenders: [Contender] = []

  do {
    let target = BindingTarget()
    let sources = (0..<4).map { _ in Observable(0) }
    for source in sources {
      source.observe(with: target, options: [.initial, .new]) { target, _ in
        target.value = sources.reduce(0) { $0 &+ $1.value }
      }
    }
    contenders.append(
      Contender(Column.handWritten, unitsPerIteration: 1, checksum: { target.total }) {
        iterations in
        for value in 0..<iterations { sources[value & 3].value = value }
      })
  }

  do {
    let target = BindingTarget()
    let sources = (0..<4).map { _ in Observable(0) }
    let keyPath: ReferenceWritableKeyPath<BindingTarget, Int> & Sendable = \.value
    for source in sources {
      source.observe(with: target, options: [.initial, .new]) { target, _ in
        target[keyPath: keyPath] = sources.reduce(0) { $0 &+ $1.value }
      }
    }
    contenders.append(
      Contender(Column.handWrittenKeyPath, unitsPerIteration: 1, checksum: { target.total }) {
        iterations in
        for value in 0..<iterations { sources[value & 3].value = value }
      })
  }

  do {
    let target = BindingTarget()
    let sources = (0..<4).map { _ in Observable(0) }
    let binding = combineLatest(sources).map { $0.reduce(0, &+) }.bind(to: target, \.value)
    contenders.append(
      Contender(
        Column.libraryBinding, unitsPerIteration: 1,
        checksum: { withExtendedLifetime(binding) { target.total } }
      ) { iterations in
        for value in 0..<iterations { sources[value & 3].value = value }
      })
  }
  return contenders
}
