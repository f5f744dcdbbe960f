/// Stops the program with `message` unless `condition` holds: the library's check of an argument
/// or a call a caller controls.
///
/// Unlike `precondition`, which in an optimised build stops with "Illegal instruction" and no
/// text, this prints `message` (with the caller's file and line) in every build but
/// `-Ounchecked`, as `Array` does for "Index out of range". The check is inlined; building and
/// printing the message happens only on failure, out of line. Internal invariants, which no
/// caller can break, stay `assert`s.
///
/// `package`, so that the testing library's checks use it too.
///
/// - Parameters:
///   - condition: What the caller must have ensured.
///   - message: What went wrong, in the caller's terms; evaluated only on failure.
///   - file: The file to report, the caller's by default.
///   - line: The line to report, the caller's by default.
@inlinable @inline(__always)
package func require(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
  file: StaticString = #fileID, line: UInt = #line
) {
  if _slowPath(!condition()) {
    requirementFailed(message(), file: file, line: line)
  }
}

/// Stops the program with `message`: the out-of-line failure of ``require(_:_:file:line:)``,
/// for a caller error found without a condition to test.
///
/// - Parameters:
///   - message: What went wrong.
///   - file: The file to report, the caller's by default.
///   - line: The line to report, the caller's by default.
@usableFromInline @inline(never)
package func requirementFailed(
  _ message: String, file: StaticString = #fileID, line: UInt = #line
) -> Never {
  fatalError(message, file: file, line: line)
}
