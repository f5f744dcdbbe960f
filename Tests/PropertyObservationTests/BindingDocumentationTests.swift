import Foundation
import PropertyObservation
import PropertyObservationTesting
import TestSupport
import Testing

/// The claims and snippets of "Getting started" (the binding layer), "Bindings and lifetimes" and
/// "Driving UI from the main queue", run as written. When one fails, fix the article with the code.
@Suite struct BindingDocumentationTests {
  /// "Getting started": the walk-through with `@Observed`, `map` and `bind(to:_:)`; the inline
  /// chain lives while the label does and goes with the source's next change after it.
  @MainActor @Test func gettingStartedBindingLayerFollowsTheNameUntilTheLabelGoes() {
    let user = DocumentationUser(name: "Madeline")
    weak var weakChain: ReadOnlyObservable<String>?
    weak var weakLabel: DocumentationTextLabel?
    var log: [String] = []
    do {
      let label = DocumentationTextLabel()
      weakLabel = label
      let chain = user.$name.map { "User's name is \($0)" }
      weakChain = chain
      chain.bind(to: label, \.text)
      user.name = "Amelia"
      log = label.log
    }
    #expect(log == ["User's name is Madeline", "User's name is Amelia"])
    #expect(weakLabel == nil)
    user.name = "Amelia is outta here!"
    #expect(weakChain == nil)
    #expect(user.$name.observerCount == 0)
  }

  /// "Who owns a binding": the handle is not the owner; `unbind()` leaves the last value.
  @MainActor @Test func bindingsArticleUnbindLeavesTheLastValue() {
    let user = DocumentationUser(name: "Madeline")
    let label = DocumentationTextLabel()
    user.$name.bind(to: label, \.text)
    user.name = "Amelia"
    let binding = user.$name.bind(to: label, \.text)
    binding.unbind()
    user.name = "Ray"
    #expect(label.log == ["Madeline", "Amelia", "Amelia"])
    #expect(label.text == "Amelia")
  }

  /// "Who owns a binding": `removeObserver(target)` ends every binding from that source to
  /// that target, and leaves the bindings of other targets; a derived chain's binding ends with
  /// `removeObserver` on the chain, not on its source.
  @MainActor @Test func bindingsArticleRemoveObserverEndsEveryBindingFromThatSourceToThatTarget() {
    let model = FakeModel(title: "a")
    let cell = FakeCell()
    let other = FakeLabel()
    let decorated = FakeLabel()
    model.title.bind(to: cell, \.title)
    model.title.bind(to: cell, \.progressText)
    model.title.bind(to: other, \.text)
    let chain = model.title.map { "\($0)!" }
    chain.bind(to: decorated, \.text)

    model.title.removeObserver(cell)
    model.title.removeObserver(decorated)
    model.title.value = "b"
    chain.removeObserver(decorated)
    model.title.value = "c"

    #expect(cell.log.events == ["title=a", "progress=a"])
    #expect(other.log.events == ["a", "b", "c"])
    #expect(decorated.log.events == ["a!", "b!"])
  }

  /// "Rebinding a reused cell": the article's snippet.
  @MainActor @Test func bindingsArticleReusedCellFollowsOnlyTheLastUser() {
    let madeline = DocumentationUser(name: "Madeline")
    let ray = DocumentationUser(name: "Ray")
    let cell = DocumentationUserCell()
    cell.show(madeline)
    cell.show(ray)
    madeline.name = "Madeline B."
    ray.name = "Raymond"
    #expect(cell.titleLabel.log == ["Madeline", "Ray", "Raymond"])
  }

  /// "Two-way bindings": the article's snippet; the model wins at binding time.
  @MainActor @Test func bindingsArticleTwoWaySnippet() {
    let profile = DocumentationUser(name: "Madeline")
    let fieldText = Observable("typed before binding")
    var modelLog: [String] = []
    var fieldLog: [String] = []
    let modelToken = profile.$name.observe { name, _ in modelLog.append(name) }
    let fieldToken = fieldText.observe { text, _ in fieldLog.append(text) }
    let token = profile.$name.bindBidirectionally(to: fieldText)
    fieldText.value = "Ada"
    profile.name = "Grace"
    #expect(modelLog == ["Ada", "Grace"])
    #expect(fieldLog == ["Madeline", "Ada", "Grace"])
    withExtendedLifetime((modelToken, fieldToken, token)) {}
  }

  /// "The @Observed property wrapper": the snippet, and the JSON of plain properties.
  @MainActor @Test func bindingsArticleObservedPlayerBindsAndEncodesAsPlainProperties() throws {
    let player = DocumentationPlayer()
    let scoreLabel = DocumentationTextLabel()
    player.$score.map { "\($0) points" }.bind(to: scoreLabel, \.text)
    player.score += 10
    #expect(scoreLabel.log == ["0 points", "10 points"])

    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let json = String(decoding: try encoder.encode(player), as: UTF8.self)
    #expect(json == #"{"name":"Ray","score":10}"#)
  }

  /// "Fallible sources": the recover closure runs once per failure, however many subscribers.
  @Test func drivingArticleRecoverRunsOncePerFailureForAllSubscribers() {
    struct Offline: Error {}
    let status = Observable<Result<String, Offline>>(.success("Waiting"))
    let recoveries = RecordingLog<String>()
    let driver = status.asDriver(scheduler: .immediate) { _ in
      recoveries.append("recover")
      return "Failed"
    }
    let first = RecordingLog<String>()
    let second = RecordingLog<String>()
    let tokens = [driver.drive { first.append($0) }, driver.drive { second.append($0) }]
    status.value = .failure(Offline())
    status.value = .success("Done")
    #expect(recoveries.events == ["recover"])
    #expect(first.events == ["Waiting", "Failed", "Done"])
    #expect(second.events == ["Waiting", "Failed", "Done"])
    withExtendedLifetime(tokens) {}
  }

  /// "Driving": `stopDriving(target)` ends a binder drive owned by that target.
  @MainActor @Test func drivingArticleStopDrivingEndsABinderDrive() {
    let count = Observable(0)
    let label = DriverTestLabel()
    let driver = count.asDriver(scheduler: .immediate)
    driver.drive(Binder(label, scheduler: .immediate) { label, value in label.text = "\(value)" })
    count.value = 1
    driver.stopDriving(label)
    count.value = 2
    #expect(label.text == "1")
    #expect(count.observerCount == 0, "the last subscriber took the upstream registration along")
  }

  /// "Who owns a binding": a binder binding is owned by the binder's target and ends with
  /// `removeObserver(target)`.
  @MainActor @Test func bindingsArticleRemoveObserverEndsABinderBinding() {
    let count = Observable(0)
    let label = DriverTestLabel()
    count.bind(to: Binder(label, scheduler: .immediate) { label, value in label.text = "\(value)" })
    count.value = 1
    count.removeObserver(label)
    count.value = 2
    #expect(label.text == "1")
    #expect(count.observerCount == 0)
  }

  /// "Why nothing leaks": rebinding the property, or `removeObserver(target)` on the chain,
  /// releases an inline chain at once, while the target lives.
  @MainActor @Test func bindingsArticleRebindingOrRemovingReleasesAnInlineChainAtOnce() {
    let source = Observable(1)
    let cell = FakeCell()
    weak var rebound: ReadOnlyObservable<String>?
    weak var removed: ReadOnlyObservable<String>?
    do {
      let chain = source.map { "\($0)%" }
      rebound = chain
      chain.bind(to: cell, \.progressText)
      let other = source.map { "\($0)!" }
      removed = other
      other.bind(to: cell, \.title)
    }
    #expect(rebound != nil && removed != nil, "the bindings keep their inline chains alive")
    let plain = Observable("plain")
    plain.bind(to: cell, \.progressText)
    #expect(rebound == nil)
    removed?.removeObserver(cell)
    #expect(removed == nil)
    source.value = 2
    #expect(source.observerCount == 0)
    #expect(cell.log.events == ["progress=1%", "title=1!", "progress=plain"])
  }

  /// "Testing without waiting": the article's `ManualScheduler` snippet, run as written.
  @Test func drivingArticleManualSchedulerSnippet() {
    let main = ManualScheduler()
    let count = Observable(0)
    let recorder = ObservationRecorder()
    let token = count.asDriver(scheduler: .manual(main)).drive(recorder.sink("count"))
    count.value = 1
    main.runOnMain { count.value = 2 }
    #expect(recorder.events == [])
    main.runAll()
    #expect(recorder.events == [.new("count", 0), .new("count", 1), .new("count", 2)])
    withExtendedLifetime(token) {}
  }

  /// "Testing without waiting": the search field in virtual time, run as written.
  @Test func drivingArticleDebouncedSearchFieldSnippet() {
    let main = ManualScheduler()
    let text = Observable("")
    let recorder = ObservationRecorder()
    let token = text.asDriver(scheduler: .manual(main))
      .debounce(for: .milliseconds(300))
      .drive(recorder.sink("query"))
    main.advance(by: .milliseconds(300))
    #expect(recorder.events == [.new("query", "")])
    for prefix in ["s", "sw", "swi", "swif", "swift"] {
      main.runOnMain { text.value = prefix }
      main.advance(by: .milliseconds(100))
    }
    #expect(recorder.events == [.new("query", "")], "one key per 100 ms is never a pause")
    main.advance(by: .milliseconds(300))
    #expect(recorder.events == [.new("query", ""), .new("query", "swift")])
    withExtendedLifetime(token) {}
  }
}

/// "Retain cycles" (Bindings and lifetimes) and the Threading article's view controller: each
/// registration the articles show as leaking keeps its controller alive, and each fix lets it go
/// with its registrations.
@Suite @MainActor struct RetainCycleDocumentationTests {
  private final class Profile {
    let name = Observable("Madeline")
  }

  /// The article's leaking forms, one at a time.
  enum Leak: CaseIterable, Sendable {
    case addObserverCapturingSelf, tokenInOwnBag, driveCapturingSelf
  }

  @MainActor private final class LeakingController {
    var nameText = ""
    private let bag = ObservationBag()

    func attach(_ profile: Profile, _ leak: Leak) {
      switch leak {
      case .addObserverCapturingSelf:
        profile.name.addObserver(self) { name, _ in self.nameText = name }
      case .tokenInOwnBag:
        profile.name.observe { name, _ in self.nameText = name }.store(in: bag)
      case .driveCapturingSelf:
        profile.name.asDriver().drive { name in self.nameText = name }.store(in: bag)
      }
    }
  }

  /// The article's fixes, all at once, as written.
  @MainActor private final class FixedController {
    var nameText = ""
    private let bag = ObservationBag()

    func attach(_ profile: Profile) {
      profile.name.observe(with: self) { controller, name in controller.nameText = name }
      profile.name.addObserver(self) { [weak self] name, _ in self?.nameText = name }
      profile.name.observe { [weak self] name, _ in self?.nameText = name }.store(in: bag)
      profile.name.asDriver().drive(with: self) { controller, name in
        controller.nameText = name
      }
      profile.name.bind(to: self, \.nameText)
    }
  }

  @Test(arguments: Leak.allCases)
  func eachLeakingFormKeepsTheControllerAndItsRegistration(_ leak: Leak) {
    let profile = Profile()
    withKnownIssue {
      expectDeallocation {
        let controller = LeakingController()
        controller.attach(profile, leak)
        return controller
      }
    }
    profile.name.value = "Amelia"
    #expect(profile.name.observerCount == 1)
  }

  @Test func theFixesReleaseTheControllerAndEveryRegistration() {
    let profile = Profile()
    weak var closed: FixedController?
    do {
      let controller = FixedController()
      closed = controller
      controller.attach(profile)
      profile.name.value = "Amelia"
      #expect(controller.nameText == "Amelia")
    }
    #expect(closed == nil)
    // The driver's registration goes at the next change after its last subscriber.
    profile.name.value = "Ada"
    #expect(profile.name.observerCount == 0)
  }
}
