import PropertyObservation
import TestSupport
import Testing

@Suite("ReadOnlyObservableArray.element(withID:)")
struct ElementByIDTests {
  private struct Todo: Identifiable, Equatable, CustomStringConvertible {
    var id: Int
    var title: String
    var description: String { "\(id):\(title)" }
  }

  /// Records every value an element observable delivers, `nil` as "ended".
  private final class ElementLog: @unchecked Sendable {
    // Only the observer's callback touches it, on the test's thread.
    private(set) var events: [String] = []
    var token: ObservationToken?

    init(_ element: ReadOnlyObservable<Todo?>) {
      token = element.observe(options: [.initial, .new]) { [unowned self] todo, _ in
        events.append(todo?.description ?? "ended")
      }
    }
  }

  @Test func followsTheElementThroughMovesAndDeliversItsUpdatesOnly() {
    let todos = ObservableArray([
      Todo(id: 1, title: "Milk"), Todo(id: 2, title: "Eggs"), Todo(id: 3, title: "Bread"),
    ])
    let eggs = todos.element(withID: 2)
    let log = ElementLog(eggs)
    todos.insert(Todo(id: 4, title: "Tea"), at: 0)  // Eggs now at 2
    todos[2].title = "Brown eggs"
    todos.move(from: 2, to: 0)
    todos[0].title = "Six eggs"
    todos[1].title = "Green tea"  // another element: nothing
    todos.edit { editor in
      editor.remove(at: 1)
      editor.insert(Todo(id: 5, title: "Jam"), at: 0)
      editor.move(from: 1, to: 3)  // Eggs to the end
      editor[3].title = "Eggs"
    }
    todos.replace(with: [
      Todo(id: 2, title: "Eggs!"), Todo(id: 1, title: "Milk"), Todo(id: 5, title: "Jam"),
    ])
    #expect(
      log.events == ["2:Eggs", "2:Brown eggs", "2:Six eggs", "2:Eggs", "2:Eggs!"])
    #expect(eggs.value == Todo(id: 2, title: "Eggs!"))
  }

  @Test func endsWithNilWhenRemovedAndIgnoresALaterElementWithTheSameID() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk"), Todo(id: 2, title: "Eggs")])
    let milk = todos.element(withID: 1)
    let log = ElementLog(milk)
    todos.remove(at: 0)
    todos.append(Todo(id: 1, title: "Milk again"))
    todos[1].title = "More milk"
    #expect(log.events == ["1:Milk", "ended"])
    #expect(milk.value == nil)
    #expect(todos.observerCount == 0)
  }

  @Test func endsWhenItsSlotIsSetToAnotherElement() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk")])
    let log = ElementLog(todos.element(withID: 1))
    todos[0] = Todo(id: 9, title: "Tea")
    #expect(log.events == ["1:Milk", "ended"])
  }

  @Test func isNilFromTheStartWhenNoElementHasTheID() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk")])
    let log = ElementLog(todos.element(withID: 7))
    todos.append(Todo(id: 7, title: "Tea"))
    #expect(log.events == ["ended"])
  }

  @Test func aResetLooksTheIDUpAgain() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk"), Todo(id: 2, title: "Eggs")])
    let log = ElementLog(todos.element(withID: 2))
    todos.reset(to: [Todo(id: 3, title: "Tea"), Todo(id: 2, title: "Eggs")])
    todos.reset(to: [Todo(id: 3, title: "Tea")])
    #expect(log.events == ["2:Eggs", "2:Eggs", "ended"])
  }

  @Test func theFieldBindingSetsTheFieldAndFollowsTheElement() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk"), Todo(id: 2, title: "Eggs")])
    let changes = ChangeLog(todos, options: [.new])
    let titleField = Observable("")
    let fieldLog = RecordingLog<String>()
    let fieldToken = titleField.observe(options: [.new]) { title, _ in fieldLog.append(title) }
    let token = todos.bindBidirectionally(\.title, ofElementWithID: 2, to: titleField)
    titleField.value = "Brown eggs"  // an update of the array
    titleField.value = "Brown eggs"  // equal: nothing
    todos.move(from: 1, to: 0)
    todos[0].title = "Six eggs"  // the field follows
    todos[1].title = "Oat milk"  // another element: nothing
    todos.remove(at: 0)  // the binding ends
    titleField.value = "Ignored"
    #expect(fieldLog.events == ["Eggs", "Brown eggs", "Brown eggs", "Six eggs", "Ignored"])
    #expect(changes.descriptions == ["~[1→1]", "↷[1→0]", "~[0→0]", "~[1→1]", "-[0]"])
    #expect(Array(todos.elements) == [Todo(id: 1, title: "Oat milk")])
    token.cancel()
    fieldToken.cancel()
  }

  @Test func cancellingTheFieldBindingEndsBothDirections() {
    let todos = ObservableArray([Todo(id: 1, title: "Milk")])
    let titleField = Observable("")
    let token = todos.bindBidirectionally(\.title, ofElementWithID: 1, to: titleField)
    #expect(titleField.value == "Milk")
    token.cancel()
    titleField.value = "Tea"
    todos[0].title = "Jam"
    #expect(titleField.value == "Tea")
    #expect(todos.observerCount == 0)
    #expect(titleField.observerCount == 0)
  }
}
