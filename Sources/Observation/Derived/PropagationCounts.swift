/// A count per propagation, for the few a pipeline has events of at once: one propagation is
/// kept inline, so the common case (one propagation at a time) never hashes, and the others go
/// to a dictionary, so a backlog of many still costs O(1) per operation. A count of zero is no
/// entry.
struct PropagationCounts {
  private var inlineTag: PropagationTag?
  private var inlineCount = 0
  private var others: [PropagationTag: Int] = [:]

  /// The count of `tag`.
  subscript(tag: PropagationTag) -> Int {
    if inlineTag == tag { return inlineCount }
    return others.isEmpty ? 0 : others[tag] ?? 0
  }

  /// Adds one to the count of `tag`.
  mutating func increment(_ tag: PropagationTag) {
    if inlineTag == tag {
      inlineCount += 1
    } else if inlineTag == nil && (others.isEmpty || others[tag] == nil) {
      inlineTag = tag
      inlineCount = 1
    } else {
      others[tag, default: 0] += 1
    }
  }

  /// Takes one from the count of `tag`, which must be above zero.
  mutating func decrement(_ tag: PropagationTag) {
    if inlineTag == tag {
      inlineCount -= 1
      if inlineCount == 0 { inlineTag = nil }
      return
    }
    guard let count = others[tag] else {
      preconditionFailure("A propagation without events was counted down.")
    }
    others[tag] = count > 1 ? count - 1 : nil
  }

  /// Sets the count of `tag` to zero.
  mutating func removeAll(of tag: PropagationTag) {
    if inlineTag == tag {
      inlineTag = nil
      inlineCount = 0
    } else if !others.isEmpty {
      others[tag] = nil
    }
  }
}
