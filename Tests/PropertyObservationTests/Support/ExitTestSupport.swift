import Testing

/// Checks what a child process that stopped printed to standard error: `message`, which the
/// library's checks print in every build, optimised ones included, and not `absent` (a line the
/// child prints if something happened before the check stopped it).
func expectStandardError(
  of result: ExitTest.Result?, toSay message: String, notToSay absent: String? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  #expect(output.contains(message), sourceLocation: sourceLocation)
  if let absent {
    #expect(!output.contains(absent), sourceLocation: sourceLocation)
  }
}
