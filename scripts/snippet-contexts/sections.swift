// The context of the doc comments on sectioned lists: the body of a `@MainActor` view
// controller's method, with a sectioned to-do list, a sectioned table adapter, freshly loaded
// sections and to-dos as its parameters.
import Dispatch
import PropertyObservation

// snippet: include World

struct TodoList: Identifiable, Equatable, Sendable {
  var id: String
}

struct Todo: Identifiable, Equatable, Sendable {
  var id: Int
  var title: String
  var isDone = false
}

/// Stands for a sectioned `UITableView` adapter, which cannot be built here.
@MainActor
final class SectionedTodoTable: SectionedBatchUpdateTarget {
  var data: [ArraySection<TodoList, Todo>] = []
  func reloadAll(_ sections: [ArraySection<TodoList, Todo>]) { data = sections }
  func performBatch(_ batch: SectionedBatchUpdate<TodoList, Todo>) { data = batch.sections }
}

extension ViewController {
  func snippet(
    lists: ObservableSectionedArray<TodoList, Todo>, todoTable: SectionedTodoTable,
    newSections: [ArraySection<TodoList, Todo>], todos: [Todo]
  ) async throws {
    do {
      // snippet: here
    }
  }
}
