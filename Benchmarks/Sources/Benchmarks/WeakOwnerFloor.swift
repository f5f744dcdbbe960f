#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The minimal correct weak-owner design, the floor for the library's semantics: one contiguous
/// array of (weak owner, options, closure), one liveness check (a weak load) per call, dead owners
/// pruned in place after the round that found them, no lock.
///
/// It keeps the parts of the contract that cost nothing when unused: `.old` before `.new`, and a
/// set from inside a callback queued and delivered after the round (one flag check per set). It
/// is generic over `Value` and stores its closures exactly as a generic library must, but lives in
/// this module, so the compiler may specialize it for `Int`: a strict floor.
///
/// Not thread-safe; registering from inside a callback is not supported.
final class WeakOwnerFloor<Value> {
  struct Entry {
    weak var owner: AnyObject?
    var options: Int
    let closure: (Value, Int) -> Void
  }

  static var old: Int { 1 }
  static var new: Int { 2 }

  @exclusivity(unchecked) private(set) var value: Value
  @exclusivity(unchecked) private var entries: ContiguousArray<Entry> = []
  @exclusivity(unchecked) private var oldCount = 0
  @exclusivity(unchecked) private var delivering = false
  @exclusivity(unchecked) private var pending: [(old: Value, new: Value)] = []

  init(_ value: Value) {
    self.value = value
  }

  func addObserver(_ owner: AnyObject, options: Int, closure: @escaping (Value, Int) -> Void) {
    entries.append(Entry(owner: owner, options: options, closure: closure))
    if options & Self.old != 0 { oldCount += 1 }
  }

  func set(_ newValue: Value) {
    let oldValue = value
    value = newValue
    if delivering {
      pending.append((oldValue, newValue))
      return
    }
    delivering = true
    deliver(old: oldValue, new: newValue)
    if !pending.isEmpty {
      var head = 0
      while head < pending.count {
        let change = pending[head]
        head += 1
        deliver(old: change.old, new: change.new)
      }
      pending.removeAll(keepingCapacity: true)
    }
    delivering = false
  }

  private func deliver(old oldValue: Value, new newValue: Value) {
    var foundDead = false
    entries.withUnsafeMutableBufferPointer { buffer in
      // Entries are read in place through a pointer: copying one would copy its weak reference
      // (a runtime call) and retain its closure.
      guard let base = buffer.baseAddress else { return }
      if oldCount > 0 {
        for index in 0..<buffer.count {
          foundDead = !call(base + index, oldValue, Self.old) || foundDead
        }
      }
      for index in 0..<buffer.count {
        foundDead = !call(base + index, newValue, Self.new) || foundDead
      }
    }
    // Dead entries were marked (options 0) where they were found, so pruning needs no weak load.
    if foundDead { entries.removeAll { $0.options == 0 } }
  }

  /// Calls the entry if it wants `option` and its owner lives; marks it dead and returns false
  /// if its owner is gone.
  @inline(__always)
  private func call(_ entry: UnsafeMutablePointer<Entry>, _ value: Value, _ option: Int) -> Bool {
    guard entry.pointee.options & option != 0 else { return true }
    guard let owner = entry.pointee.owner else {
      if entry.pointee.options & Self.old != 0 { oldCount -= 1 }
      entry.pointee.options = 0
      return false
    }
    entry.pointee.closure(value, option)
    // Keeps the owner alive until the call returns; cheaper than `withExtendedLifetime`, whose
    // closure the optimizer does not always inline (measured: 60 instructions per call).
    extendLifetime(owner)
    return true
  }
}

/// The floor with a mutex held across each whole round, for the two-thread row: the cheapest way
/// to make the floor safe to set from two threads (it holds a lock while user code runs, which the
/// library must not do).
final class LockedWeakOwnerFloor<Value> {
  let floor: WeakOwnerFloor<Value>
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  init(_ value: Value) {
    floor = WeakOwnerFloor(value)
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func set(_ newValue: Value) {
    pthread_mutex_lock(mutex)
    floor.set(newValue)
    pthread_mutex_unlock(mutex)
  }
}

// The mutex guards every use of `floor` made through `set`.
extension LockedWeakOwnerFloor: @unchecked Sendable {}
