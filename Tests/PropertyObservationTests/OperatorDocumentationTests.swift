import PropertyObservation
import TestSupport
import Testing

/// The operator snippets of "Bindings and lifetimes" (conversion, selection, filtering, combining
/// many), run as written. When one fails, fix the article with the code.
@Suite struct OperatorDocumentationTests {
  private final class TextField {
    let text = Observable("")
  }

  @Test func twoWayThroughAConversionRejectsTextThatIsNotANumber() {
    let quantity = Observable(1)
    let quantityField = TextField()
    let token = quantity.bindBidirectionally(
      to: quantityField.text,
      forward: { String($0) },
      backward: { Int($0) }
    )
    #expect(quantityField.text.value == "1")
    quantityField.text.value = "12"
    #expect(quantity.value == 12)
    quantityField.text.value = "12a"
    #expect(quantity.value == 12)
    quantityField.text.value = "012"
    #expect(quantity.value == 12)
    #expect(quantityField.text.value == "012")
    quantity.value = 3
    #expect(quantityField.text.value == "3")
    withExtendedLifetime(token) {}
  }

  @MainActor @Test func followingASelectionShowsTheSelectedUsersNameOnly() {
    let names = [Observable("Ray"), Observable("Ada")]
    let selection = Observable(0)
    let detailLabel = DocumentationTextLabel()
    let selectedName = selection.flatMapLatest { index in names[index] }
    selectedName.bind(to: detailLabel, \.text)
    names[0].value = "Raymond"
    selection.value = 1
    names[0].value = "Ray"
    #expect(detailLabel.log == ["Ray", "Raymond", "Ada"])
  }

  @Test func compactMapKeepsTheLastNumberTyped() {
    let quantityField = TextField()
    let quantity = quantityField.text.compactMap(initial: 0) { Int($0) }
    var log: [Int] = []
    for typed in ["12", "12a", "7"] {
      quantityField.text.value = typed
      log.append(quantity.value)
    }
    #expect(log == [12, 12, 7])
  }

  @Test func combineLatestOfAnArrayTellsWhetherAllAreDone() {
    let downloads = (0..<3).map { _ in Observable(false) }
    let allDone = combineLatest(downloads).map { $0.allSatisfy { $0 } }
    for download in downloads.dropLast() { download.value = true }
    #expect(allDone.value == false)
    downloads[2].value = true
    #expect(allDone.value == true)
  }
}
