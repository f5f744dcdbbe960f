/// Whether the engine takes its fast paths: the single-observer shortcut of a derived value's
/// `feed` and the lock-and-append registrations.
///
/// Each fast path is an optimisation of the general path it skips, never a rule of its own: built
/// with `-Xswiftc -DPROPERTY_OBSERVATION_GENERAL_PATHS`, every change and registration takes the
/// general path, and every test suite must pass that way too (`.ci/run` runs them both ways).
enum FastPaths {
  #if PROPERTY_OBSERVATION_GENERAL_PATHS
    @inline(__always) static var areEnabled: Bool { false }
  #else
    @inline(__always) static var areEnabled: Bool { true }
  #endif
}
