import PropertyObservation

/// A user whose name and unread count the app shows.
final class User {
  @Observed var name: String
  @Observed var unreadCount = 0

  init(name: String) {
    self.name = name
  }
}

/// Stands in for a label: prints its text whenever it is set.
@MainActor
final class Label {
  let name: String
  var text: String? {
    didSet { print("[\(name)] \(text ?? "")") }
  }

  init(name: String) {
    self.name = name
  }
}

/// A table cell that shows one user at a time and is reused for another.
@MainActor
final class UserCell {
  let titleLabel = Label(name: "cell")

  func show(_ user: User) {
    user.$name.bind(to: titleLabel, \.text)
  }
}

let user = User(name: "Madeline")
let nameLabel = Label(name: "name")
let badge = Label(name: "badge")

user.$name.bind(to: nameLabel, \.text)
user.$unreadCount.map { $0 == 0 ? "No messages" : "\($0) unread" }.bind(to: badge, \.text)

user.name = "Amelia"
user.unreadCount += 2

let other = User(name: "Ray")
weak var closedCell: UserCell?
do {
  let cell = UserCell()
  closedCell = cell
  cell.show(user)
  cell.show(other)
  user.name = "Amelia B."
  other.name = "Raymond"
}
// The list is gone: the cell went with it, and its binding with the cell.
print("cell deallocated: \(closedCell == nil), observers of Ray: \(other.$name.observerCount)")
