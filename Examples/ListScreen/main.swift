// A to-do list screen without UIKit: an ObservableArray of to-dos shown in a fake table view
// that prints the batches UIKit would animate, a filtered list of the open to-dos with its own
// table, a count label following the open list, and a search list: the to-dos whose title
// contains the search field's text, sorted by title; and a sectioned table of the to-dos grouped
// by state (Open, Done), an ObservableSectionedArray replaced from the list after each change.
// Everything runs on the main actor, so the output is the same on every run.
import PropertyObservation

// MARK: - Model

struct Todo: Identifiable, Equatable, Sendable {
  let id: Int
  var title: String
  var isDone = false
}

/// A section of the grouped table: the to-dos in one state.
struct TodoGroup: Identifiable, Equatable, Sendable {
  let id: String
}

/// The to-dos grouped by state, open ones first; a group without to-dos is left out.
func groupedByState(_ todos: [Todo]) -> [ArraySection<TodoGroup, Todo>] {
  let groups = [
    ArraySection(model: TodoGroup(id: "Open"), items: todos.filter { !$0.isDone }),
    ArraySection(model: TodoGroup(id: "Done"), items: todos.filter(\.isDone)),
  ]
  return groups.filter { !$0.items.isEmpty }
}

// MARK: - Views (stand-ins)

/// A table view: prints what it is asked to do, checks each batch's counts as UIKit does, and
/// shows its rows.
@MainActor
final class FakeTableView: BatchUpdateTarget {
  let name: String
  private var rows: [Todo] = []

  init(_ name: String) {
    self.name = name
  }

  func reloadAll(_ elements: [Todo]) {
    rows = elements
    print("  [\(name)] reload all: \(describe(rows))")
  }

  func performBatch(_ batch: BatchUpdate<Todo>) {
    // UIKit's first check: the rows after the batch must add up.
    precondition(
      rows.count - batch.deletions.count + batch.insertions.count == batch.elements.count,
      "inconsistent batch")
    var steps: [String] = []
    if !batch.reloads.isEmpty { steps.append("reload \(batch.reloads)") }
    if !batch.deletions.isEmpty { steps.append("delete \(batch.deletions)") }
    if !batch.insertions.isEmpty { steps.append("insert \(batch.insertions)") }
    if !batch.moves.isEmpty { steps.append("move \(batch.moves)") }
    rows = batch.elements
    print("  [\(name)] \(steps.joined(separator: ", ")): \(describe(rows))")
  }

  private func describe(_ rows: [Todo]) -> String {
    rows.map { $0.isDone ? "✓\($0.title)" : $0.title }.joined(separator: " | ")
  }
}

/// A sectioned table view: prints what it is asked to do, section changes first, and shows its
/// sections.
@MainActor
final class FakeSectionedTableView: SectionedBatchUpdateTarget {
  let name: String
  private var sections: [ArraySection<TodoGroup, Todo>] = []

  init(_ name: String) {
    self.name = name
  }

  func reloadAll(_ sections: [ArraySection<TodoGroup, Todo>]) {
    self.sections = sections
    print("  [\(name)] reload all: \(describe(sections))")
  }

  func performBatch(_ batch: SectionedBatchUpdate<TodoGroup, Todo>) {
    var steps: [String] = []
    func add(_ name: String, _ changes: [some CustomStringConvertible]) {
      if !changes.isEmpty { steps.append("\(name) \(changes)") }
    }
    add("reload sections", batch.sectionReloads)
    add("delete sections", batch.sectionDeletions)
    add("insert sections", batch.sectionInsertions)
    add("move sections", batch.sectionMoves)
    add("reload", batch.itemReloads)
    add("delete", batch.itemDeletions)
    add("insert", batch.itemInsertions)
    add("move", batch.itemMoves)
    sections = batch.sections
    print("  [\(name)] \(steps.joined(separator: ", ")): \(describe(sections))")
  }

  private func describe(_ sections: [ArraySection<TodoGroup, Todo>]) -> String {
    sections.map { section in
      "\(section.model.id): " + section.items.map(\.title).joined(separator: " | ")
    }.joined(separator: " ‖ ")
  }
}

/// A label: prints whenever its text is set.
@MainActor
final class Label {
  var text: String? {
    didSet { print("  [count] \(text ?? "-")") }
  }
}

// MARK: - Controller

@MainActor
final class TodoListController {
  let allTable = FakeTableView("all")
  let openTable = FakeTableView("open")
  let countLabel = Label()
  let searchTable = FakeTableView("search")
  let groupedTable = FakeSectionedTableView("by state")
  /// The search field's text.
  let searchText = Observable("")
  /// The to-dos grouped by state, for the sectioned table.
  let groups = ObservableSectionedArray<TodoGroup, Todo>()
  private var grouping: ObservationToken?

  func show(_ todos: ReadOnlyObservableArray<Todo>) {
    todos.bind(to: allTable)
    let open = todos.filter { !$0.isDone }
    open.bind(to: openTable)
    open.asObservable().map { "\($0.count) open" }.bind(to: countLabel, \.text)
    todos
      .filter(by: searchText) { todo, text in
        text.isEmpty || todo.title.lowercased().contains(text.lowercased())
      }
      .sorted { ($0.title, $0.id) < ($1.title, $1.id) }
      .bind(to: searchTable)
    // Each change of the list becomes a replace of the groups, diffed by id: a to-do ticked off
    // moves from Open to Done.
    groups.replace(with: groupedByState(Array(todos.elements)))
    groups.bind(to: groupedTable)
    grouping = todos.asObservable().observe(options: [.new]) { [groups] todos, _ in
      groups.replace(with: groupedByState(todos))
    }
  }
}

// MARK: - The screen

let todos = ObservableArray([
  Todo(id: 1, title: "Milk"), Todo(id: 2, title: "Eggs"), Todo(id: 3, title: "Bread"),
])
let controller = TodoListController()

print("Show the list:")
controller.show(todos)

print("Add a to-do:")
todos.append(Todo(id: 4, title: "Tea"))

print("Tick off Eggs (an update in all, a removal in open):")
todos[1].isDone = true

print("Move Tea to the top:")
todos.move(from: 3, to: 0)

print("Fresh data from the server: Bread gone, Cake new, Milk done, order changed:")
todos.replace(with: [
  Todo(id: 2, title: "Eggs", isDone: true), Todo(id: 4, title: "Tea"),
  Todo(id: 5, title: "Cake"), Todo(id: 1, title: "Milk", isDone: true),
])

print("Type \"e\" in the search field (only the search list changes):")
controller.searchText.value = "e"

print("Rename Tea to Apple tea (it moves to the top of the search list):")
todos[1].title = "Apple tea"

print("Clear the search field:")
controller.searchText.value = ""

print("Clear the done ones in one edit:")
todos.edit { list in
  for index in list.elements.indices.reversed() where list[index].isDone {
    list.remove(at: index)
  }
}

print("Start over (a reset reloads):")
todos.reset(to: [Todo(id: 6, title: "Plan the week")])
