/// The column names, shared by the tables and the target checks.
enum Column {
  static let closures = "closure loop"
  static let floor = "weak-owner floor"
  static let lockedFloor = "floor + mutex"
  static let combine = "OpenCombine"
  static let owner = "addObserver"
  static let ownerBeside = "addObserver, removeIfExists: false"
  static let token = "observe (token)"
  static let handWritten = "hand-written closure"
  static let handWrittenKeyPath = "hand-written, key-path write"
  static let libraryBinding = "library binding"
  static let mainAsync = "observe + main.async"
  static let combineReceiveOn = "OpenCombine receive(on: main)"
  static let driverEvery = "Driver .everyValue"
  static let driverCoalescing = "Driver .coalescing"
}
