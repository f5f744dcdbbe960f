/// Which values a ``Driver`` delivers when they arrive faster than the main queue takes them.
///
/// ```swift
/// let progress = download.progress.asDriver(policy: .coalescing)
/// ```
public enum DeliveryPolicy: Sendable {
  /// Every value, in the order it was set (the default). Each value set off the main queue is
  /// delivered, even when thousands wait.
  case everyValue

  /// Only the latest value per main-queue turn: values that arrive while an earlier one still
  /// waits replace it. For high-rate background producers such as progress, where only the
  /// newest value matters. Order is still kept: a delivered value is never older than one
  /// delivered before it, and the last value set is always delivered.
  ///
  /// On the main queue (``MainScheduler/main``) the driver's turns start at least a millisecond
  /// apart: while values keep coming faster than that, it delivers about a thousand a second,
  /// more than any display shows, and a turn that follows a quiet moment starts at once.
  case coalescing
}
