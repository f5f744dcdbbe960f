/// Fails the current test if the object that `body` makes outlives the call: the check for a
/// view controller or model that leaks through a strong capture.
///
/// Create the object inside `body`, exercise it there (register its observers, bind its views),
/// and return it. The function keeps only a weak reference to it, and once `body` has returned
/// it checks that the object has been deallocated. If it is still alive, something holds it
/// strongly: most often a closure registered on an observable that captures `self`
/// (`addObserver(self) { value, _ in self.text = value }`), which the observable keeps for as
/// long as the object lives, so the object never goes.
///
/// ```swift
/// @MainActor final class AccountViewController {
///   var nameText = ""
///
///   func attach(_ name: Observable<String>) {
///     name.observe(with: self) { controller, name in controller.nameText = name }
///   }
/// }
///
/// @Test @MainActor func closingTheScreenReleasesTheController() {
///   let name = Observable("Madeline")
///   expectDeallocation {
///     let controller = AccountViewController()
///     controller.attach(name)
///     name.value = "Amelia"
///     return controller
///   }
///   #expect(name.observerCount == 0)
/// }
/// ```
///
/// The failure is reported to the test that is running, at the line of the call: through
/// `Issue.record` in a Swift Testing test, through `XCTFail` in an XCTest case. Its message names
/// the object's type.
///
/// > Important: The check runs as soon as `body` returns, on the calling thread. Anything that
/// > still holds the object at that moment counts as a leak, including a main-queue block or a
/// > `Task` that captured it and has not run yet: let such work finish inside `body` (with
/// > ``expectEventually(_:timeout:fileID:filePath:line:column:_:)`` or an expectation), or
/// > check later with a weak reference of your own.
///
/// - Parameters:
///   - comment: A note added to the failure message, such as the screen being tested.
///   - fileID: The file ID of the call, used in the failure's location.
///   - filePath: The file path of the call, used in the failure's location.
///   - line: The line of the call, used in the failure's location.
///   - column: The column of the call, used in the failure's location.
///   - body: Makes the object to check, uses it, and returns it. Nothing else should keep it.
/// - Returns: Whether the object was deallocated, so that a test can stop early when it was not.
@discardableResult
public func expectDeallocation<Object: AnyObject>(
  _ comment: String? = nil,
  fileID: StaticString = #fileID,
  filePath: StaticString = #filePath,
  line: UInt = #line,
  column: UInt = #column,
  of body: () throws -> Object
) rethrows -> Bool {
  let tracked = try TrackedObject(made: body)
  guard tracked.isAlive else { return true }
  var message = comment.map { "\($0): " } ?? ""
  message += "\(tracked.typeName) was not deallocated when the scope that made it ended: "
  message += "something still holds it strongly (a registered closure that captures it, a "
  message += "token or task it keeps in itself, …)."
  recordFailure(
    message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  return false
}

/// A weak reference to an object made by a closure, taken so that no strong reference of the
/// caller outlives the initializer.
private struct TrackedObject {
  weak var object: AnyObject?
  let typeName: String

  init<Object: AnyObject>(made body: () throws -> Object) rethrows {
    let object = try body()
    self.object = object
    typeName = String(describing: type(of: object))
  }

  var isAlive: Bool { object != nil }
}
