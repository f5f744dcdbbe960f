// Switching: follow the observable that the current value selects.

extension ReadOnlyObservable {
  /// Returns a read-only observable that follows the observable `transform` returns for this
  /// observable's current value, and switches to another one whenever this value changes.
  ///
  /// This is master/detail: the detail label shows the name of whichever user is selected, and
  /// follows that user's renames until the selection moves on.
  ///
  /// ```swift
  /// let names = [Observable("Ray"), Observable("Ada")]  // each user's name
  /// let selection = Observable(0)  // the selected row
  /// let selectedName = selection.flatMapLatest { index in names[index] }
  /// selectedName.bind(to: detailLabel, \.text)
  /// names[0].value = "Raymond"  // the label follows while row 0 is selected
  /// selection.value = 1         // the label shows "Ada" at once
  /// ```
  ///
  /// The derived observable starts with the current value of the observable selected by this
  /// observable's current value. Each change of this observable calls `transform` once and
  /// *switches*: the registration on the previously selected observable ends at once, and the
  /// derived observable registers on the newly selected one with
  /// ``ObservableOptions/initial``, so it publishes that observable's current value right away
  /// (also when `transform` returns the same observable again). From then on it publishes that
  /// observable's changes, and no value of a previously selected observable, even one that was
  /// being delivered on another thread at the moment of the switch. Like every derived
  /// observable it publishes once per change: a transaction
  /// (``withObservationTransaction(_:)``) that moves the selection and sets the newly selected
  /// observable publishes the final value once.
  ///
  /// ## Lifetime
  ///
  /// The derived observable keeps this observable alive, and the selected observable while it
  /// is selected; a previously selected one is let go at the switch, so an observable that
  /// `transform` builds inline (`{ names[$0].map { $0.uppercased() } }`) lives exactly as
  /// long as it is selected. Nothing keeps the derived observable alive but its users, as for
  /// ``map(_:)``; when it goes, both of its registrations end.
  ///
  /// > Important: Timing is that of ``combineLatest(_:)`` (it reads the selected observable,
  /// > so it waits until the propagation ends): the switch, and each change of the selected
  /// > observable, is published synchronously on the thread that delivers it, one at a time
  /// > and in order; `transform` never runs concurrently with itself, and no lock is held while
  /// > it runs. Once a switch has been published, no value of a previously selected observable
  /// > is, not even one that another thread was delivering at that moment.
  ///
  /// - Parameter transform: Selects the observable to follow for a value of this observable.
  ///   It may build a new observable or return an existing one; it should not set this one. It
  ///   must not return an observable derived from the result of this call (a cycle): that
  ///   stops the program with a precondition failure when it is selected.
  /// - Returns: A read-only observable of the selected observable's value.
  public func flatMapLatest<Result>(
    _ transform: @escaping @Sendable (Value) -> ReadOnlyObservable<Result>
  ) -> ReadOnlyObservable<Result> {
    let selection = InnerSelection()
    let latest = SelectedValue<Result>()
    // The pipeline's `apply` reaches its own pipeline through a weak reference (a strong one
    // would be a cycle nothing breaks). Set before any event is processed.
    let reference = PipelineReference<SwitchEvent<Value, Result>, Result>()
    // Ranked above this observable now, and above each observable it selects from the moment
    // it selects it (see `DerivedRank`), so that in a propagation that changes both this
    // observable and the selected one, the switch reads the selected one's new value.
    let ranking = DerivedRank(above: [self], switching: true)
    let pipeline = DerivedPipeline<SwitchEvent<Value, Result>, Result>(
      ranking: ranking,
      apply: { event in
        switch event {
        case .select(let value):
          let inner = transform(value)
          let generation = selection.beginSwitch()
          guard let pipeline = reference.pipeline else { return false }
          if ranking.follow(inner) { pipeline.holdBackPublication() }
          // The core delivers `.initial` inside the registering call, even while another
          // thread delivers a round of `inner`: that value is what this event publishes, so a
          // switch is one step, and the later changes of `inner` follow it through the
          // pipeline. The registration's closure holds the pipeline, which holds `selection`,
          // which holds the registration's token: the switch or the end of the selection
          // breaks that cycle.
          let source = ObjectIdentifier(inner)
          let token = inner.observe(options: [.initial, .new], in: .delivering) { value, option in
            if option == .initial {
              latest.value = value
            } else {
              pipeline.receive(.value(value, generation: generation), from: source)
            }
          }
          selection.finishSwitch(to: token)
          return true
        case .value(let value, let generation):
          guard selection.isCurrent(generation) else { return false }
          latest.value = value
          return true
        }
      },
      current: { latest.current })
    reference.pipeline = pipeline
    return DerivedObservable.make(pipeline: pipeline) {
      [feed(pipeline) { .select($0) }, ObservationToken(source: selection)]
    }
  }
}

/// One upstream event of a `flatMapLatest`: the outer value changed, or the observable selected
/// in `generation` published a value.
enum SwitchEvent<Outer, Inner> {
  case select(Outer)
  case value(Inner, generation: UInt)
}

/// The value a `flatMapLatest` publishes: the `.initial` value of the observable it switched
/// to, then that observable's changes. Only the pipeline's recomputation touches it (the
/// `.initial` call runs inside the registering call, on that recomputation).
final class SelectedValue<Value> {
  var value: Value?

  /// The value, once a switch has delivered one.
  var current: Value {
    guard let value else { preconditionFailure("a selected observable did not deliver .initial") }
    return value
  }
}

/// A weak reference to a pipeline, for an `apply` that registers its own pipeline on new
/// sources. Written once, before the pipeline processes any event (the builder holds the drainer
/// role until then); read only by the drainer.
final class PipelineReference<Event, Output> {
  weak var pipeline: DerivedPipeline<Event, Output>?
}

/// The registration on the observable a `flatMapLatest` currently follows, and the generation
/// that tells its values from those of observables it followed before.
///
/// The derived observable owns it through a token (its `removeRegistration` ends the current
/// registration), so the registration ends when the derived observable goes. Switching happens
/// on the pipeline's drainer; ending can happen on any thread, hence the lock around `current`.
final class InnerSelection: RegistrationRemoving {
  private let lock = Lock()
  private var current: ObservationToken?  // guarded by `lock`
  private var isEnded = false  // guarded by `lock`
  /// Read and written only by the pipeline's drainer, which runs one event at a time: a value
  /// of the followed observable is checked without taking the lock.
  private var generation: UInt = 0

  deinit {
    lock.deallocate()
  }

  /// Starts a switch: from now on only values of the returned generation are current, and the
  /// previous registration ends (released after unlocking, so its closure is never released
  /// under the lock). Drainer only.
  func beginSwitch() -> UInt {
    generation &+= 1
    lock.lock()
    let previous = current
    current = nil
    lock.unlock()
    previous?.cancel()
    return generation
  }

  /// Keeps `token` as the current registration, unless the selection has ended meanwhile (the
  /// derived observable went on another thread); then the token is cancelled at once. Drainer
  /// only, right after ``beginSwitch()``.
  func finishSwitch(to token: ObservationToken) {
    lock.lock()
    let keeps = !isEnded
    if keeps { current = token }
    lock.unlock()
    if !keeps { token.cancel() }
  }

  /// Whether values of `candidate` may still be published. Drainer only.
  func isCurrent(_ candidate: UInt) -> Bool {
    generation == candidate
  }

  func removeRegistration(identifiedBy handle: AnyObject) {
    lock.lock()
    isEnded = true
    let previous = current
    current = nil
    lock.unlock()
    previous?.cancel()
  }
}

// `current` and `isEnded` are guarded by `lock`; `generation` belongs to the pipeline's drainer
// (the drainer role is handed over under the pipeline's lock, which orders the accesses).
extension InnerSelection: @unchecked Sendable {}
