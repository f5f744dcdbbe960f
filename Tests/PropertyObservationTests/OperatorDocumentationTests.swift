import PropertyObservation
import TestSupport
import Testing

/// The operator snippets of "Bindings and lifetimes" (conversion, selection, filtering, combining
/// many), run as written. When one fails, fix the article with the code.
@Suite struct OperatorDocumentationTests {
  private final class Order {
    @Observed var quantity = 1
  }

  private final class TextField {
    let text = Observable("")
  }

  @Test func twoWayThroughAConversionRejectsTextThatIsNotANumber() {
    let order = Order()
    let quantityField = TextField()
    let token = order.$quantity.bindBidirectionally(
      to: quantityField.text,
      forward: { String($0) },
      backward: { Int($0) }
    )
    #expect(quantityField.text.value == "1")
    quantityField.text.value = "12"
    #expect(order.quantity == 12)
    quantityField.text.value = "12a"
    #expect(order.quantity == 12)
    quantityField.text.value = "012"
    #expect(order.quantity == 12)
    #expect(quantityField.text.value == "012")
    order.quantity = 3
    #expect(quantityField.text.value == "3")
    withExtendedLifetime(token) {}
  }

  @Test func followingASelectionShowsTheSelectedUsersNameOnly() {
    let users = [DocumentationUser(name: "Ray"), DocumentationUser(name: "Grace")]
    let names = users.map(\.$name)
    let selection = Observable(0)
    let detailLabel = DocumentationTextLabel()
    let selectedName = selection.flatMapLatest { index in names[index] }
    selectedName.bind(to: detailLabel, \.text)
    users[0].name = "Ada"
    selection.value = 1
    users[0].name = "Ray"
    #expect(detailLabel.log == ["Ray", "Ada", "Grace"])
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
