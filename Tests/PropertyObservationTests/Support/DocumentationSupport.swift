import Dispatch

/// An owner object for the documentation examples: any class instance can own a registration.
final class DocumentationOwner: Sendable {}

/// An ordered log that several threads append to.
final class DocumentationLog: @unchecked Sendable {
  // `storage` is only touched on `queue`, which serializes the threads.
  private let queue = DispatchQueue(label: "DocumentationLog")
  private var storage: [String] = []

  func append(_ entry: String) {
    queue.sync { storage.append(entry) }
  }

  var entries: [String] {
    queue.sync { storage }
  }
}
