// The context of the collections article and doc comments: the body of a `@MainActor` view
// controller's method, with a to-do list, a table adapter and freshly loaded to-dos as its
// parameters.
import Dispatch
import PropertyObservation

// snippet: include World

struct Todo: Identifiable, Equatable, Sendable {
  var id: Int
  var title: String
  var isDone = false
}

/// Stands for a `UITableView` adapter, which cannot be built here.
@MainActor
final class TodoTable: BatchUpdateTarget {
  var rows: [Todo] = []
  func reloadAll(_ elements: [Todo]) { rows = elements }
  func performBatch(_ batch: BatchUpdate<Todo>) { rows = batch.elements }
}

extension ViewController {
  func snippet(todos: ObservableArray<Todo>, tableAdapter: TodoTable, loaded: [Todo]) async throws
  {
    do {
      // snippet: here
    }
  }
}
