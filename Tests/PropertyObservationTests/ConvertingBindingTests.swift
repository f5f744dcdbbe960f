import PropertyObservation
import TestSupport
import Testing

@Suite("Two-way bindings with a conversion")
struct ConvertingBindingTests {
  /// An `Int` model bound to a `String` text field, with every round of both logged.
  @MainActor private final class Screen {
    let quantity: Observable<Int>
    let text: Observable<String>
    let log = RecordingLog<String>()
    private var tokens: [ObservationToken] = []

    init(quantity: Int, text: String = "") {
      self.quantity = Observable(quantity)
      self.text = Observable(text)
    }

    /// Logs the rounds of both sides, then binds the model to the field (the model wins). The
    /// loggers come first, so each side's round is logged before the round it causes.
    func bind() -> ObservationToken {
      let log = self.log
      tokens.append(quantity.observe { value, _ in log.append("model \(value)") })
      tokens.append(text.observe { value, _ in log.append("field \(value)") })
      return quantity.bindBidirectionally(to: text, forward: { String($0) }, backward: { Int($0) })
    }
  }

  @MainActor @Test func theFieldTakesTheConvertedModelValueAtTheMomentOfBinding() {
    let screen = Screen(quantity: 5, text: "old")
    let binding = screen.bind()
    #expect(screen.text.value == "5")
    #expect(screen.log.events == ["field 5"])
    withExtendedLifetime(binding) {}
  }

  @MainActor @Test func eachChangeIsForwardedOnceThroughItsConversionWithoutAnEcho() {
    let screen = Screen(quantity: 5)
    let binding = screen.bind()
    screen.text.value = "12"
    screen.quantity.value = 3
    screen.text.value = "4"
    #expect(
      screen.log.events == [
        "field 5",
        "field 12", "model 12",
        "model 3", "field 3",
        "field 4", "model 4",
      ])
    withExtendedLifetime(binding) {}
  }

  @MainActor @Test func aRejectedValueLeavesTheModelUnchangedAndTheFieldAsTyped() {
    let screen = Screen(quantity: 5)
    let binding = screen.bind()
    screen.text.value = "12"
    screen.text.value = "12a"
    screen.text.value = ""
    #expect(screen.quantity.value == 12)
    #expect(screen.text.value == "")
    #expect(screen.log.events == ["field 5", "field 12", "model 12", "field 12a", "field "])
    // The binding goes on after a rejection, both ways.
    screen.text.value = "8"
    screen.quantity.value = 9
    #expect(screen.log.events.suffix(4) == ["field 8", "model 8", "model 9", "field 9"])
    withExtendedLifetime(binding) {}
  }

  @MainActor @Test func theFieldKeepsWhatWasTypedWhenItsConversionDiffers() {
    let screen = Screen(quantity: 5)
    let binding = screen.bind()
    screen.text.value = "007"
    #expect(screen.quantity.value == 7)
    #expect(screen.text.value == "007", "the echo of 7 is not written back as \"7\"")
    #expect(screen.log.events == ["field 5", "field 007", "model 7"])
    withExtendedLifetime(binding) {}
  }

  @MainActor @Test func aCorrectionMadeByAModelObserverIsSentBackToTheField() {
    let screen = Screen(quantity: 5)
    let binding = screen.bind()
    // The model clamps to 100, from inside its own round.
    let clamp = screen.quantity.observe { value, _ in
      if value > 100 { screen.quantity.value = 100 }
    }
    screen.text.value = "150"
    #expect(screen.quantity.value == 100)
    #expect(screen.text.value == "100")
    #expect(
      screen.log.events == ["field 5", "field 150", "model 150", "model 100", "field 100"])
    withExtendedLifetime((binding, clamp)) {}
  }

  @Test func conversionsRunOncePerForwardedChange() {
    let model = Observable(1)
    let field = Observable("")
    let conversions = RecordingLog<String>()
    let binding = model.bindBidirectionally(
      to: field,
      forward: { value in
        conversions.append("forward \(value)")
        return String(value)
      },
      backward: { text in
        conversions.append("backward \(text)")
        return Int(text)
      }
    )
    field.value = "2"
    model.value = 3
    field.value = "x"
    #expect(
      conversions.events == ["forward 1", "backward 2", "forward 3", "backward x"])
    withExtendedLifetime(binding) {}
  }

  // MARK: - Lifetimes

  @MainActor @Test func cancellingTheTokenEndsTheBindingBothWays() {
    let screen = Screen(quantity: 1)
    let binding = screen.bind()
    binding.cancel()
    screen.text.value = "2"
    screen.quantity.value = 3
    #expect(screen.quantity.value == 3)
    #expect(screen.text.value == "2")
    #expect(screen.quantity.observerCount == 1)  // the screen's logger only
    #expect(screen.text.observerCount == 1)
  }

  @Test func theBindingKeepsNeitherSideAliveAndEndsWithEither() {
    let model = Observable(1)
    weak var weakField: Observable<String>?
    var binding: ObservationToken?
    do {
      let field = Observable("")
      weakField = field
      binding = model.bindBidirectionally(to: field, forward: { "\($0)" }, backward: { Int($0) })
      #expect(field.value == "1")
    }
    #expect(weakField == nil)
    model.value = 2  // nothing to forward to
    #expect(model.observerCount == 1, "the link stays registered until its token goes")
    #expect(binding != nil)
    binding = nil
    #expect(model.observerCount == 0)
  }

  @Test func releasingTheTokenReleasesTheLinkAndItsConversions() {
    let model = Observable(1)
    let field = Observable("")
    weak var weakCapture: Capture?
    do {
      let capture = Capture()
      weakCapture = capture
      let binding = model.bindBidirectionally(
        to: field,
        forward: { [capture] in capture.describe($0) },
        backward: { Int($0) }
      )
      withExtendedLifetime(binding) {}
    }
    #expect(weakCapture == nil)
    #expect(model.observerCount == 0)
    #expect(field.observerCount == 0)
  }
}

/// An object a conversion captures, to watch its lifetime.
private final class Capture: Sendable {
  func describe(_ value: Int) -> String {
    "\(value)"
  }
}
