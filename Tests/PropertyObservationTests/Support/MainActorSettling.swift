import PropertyObservation
import TestSupport

/// The value ``settleMainActorCalls(of:)`` sets; the tests that use it set no other negative
/// value.
let settlingMarker = -99

/// Waits until every main-actor call of `source` already waiting for the main queue has run or
/// been dropped, and returns whether that was proven in time.
///
/// An observable's main-actor calls reach the main queue in one lane, in order. A main-actor
/// registration made now gets its call for ``settlingMarker``, set from another thread, behind
/// every call waiting before it, so once that call has arrived no earlier call is still on its
/// way: a test that then finds nothing has proven the absence, where a pause would only have
/// hoped for it (and passed whenever the main queue was merely slow). The wait is event-driven,
/// bounded by `testTimeout`. Registrations of `source` that are still live receive the marker
/// too, as the last event of their log.
@MainActor func settleMainActorCalls(of source: Observable<Int>) async -> Bool {
  let arrived = RecordingLog<Int>()
  let marker = source.observe { value, _ in
    if value == settlingMarker { arrived.append(value) }
  }
  let set = runInBackground { source.value = settlingMarker }
  let isSettled = await arrived.waitForCount(1)
  await set.finished("the marker's set")
  withExtendedLifetime(marker) {}
  return isSettled
}
