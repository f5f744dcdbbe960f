#ifndef PROPERTY_OBSERVATION_ATOMICS_H
#define PROPERTY_OBSERVATION_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

/// A counter written by one thread and read by others: how many rounds a thread has delivered,
/// read by a thread waiting for its propagation to tell a slow propagation from a stuck one.
/// Relaxed: the reader needs no ordering with anything else, only a value that is not torn.
typedef struct {
  _Atomic(uintptr_t) value;
} po_counter;

/// Adds one; only the owning thread calls it, so a load and a store suffice (no locked
/// instruction on the delivery path).
static inline void po_counter_increment(po_counter *counter) {
  uintptr_t value = atomic_load_explicit(&counter->value, memory_order_relaxed);
  atomic_store_explicit(&counter->value, value + 1, memory_order_relaxed);
}

/// Reads the counter from any thread.
static inline uintptr_t po_counter_load(po_counter *counter) {
  return atomic_load_explicit(&counter->value, memory_order_relaxed);
}

#if defined(__linux__)

/// The library's lock on Linux: one 32-bit word, a futex. 0: free; 1: held, nobody sleeps on it;
/// 2: held, and a thread may sleep on it (the unlocker then wakes one). This is the mutex of
/// Drepper's "Futexes Are Tricky" (its third version), with a short spin before sleeping.
///
/// A plain `uint32_t`, not an `_Atomic` one, so that Swift imports the type and can store it
/// inline in an object; these functions alone touch it, and only through atomic operations.
typedef struct {
  uint32_t state;
} po_lock;

/// The contended half of `po_lock_lock`: spins briefly, then sleeps until it takes the lock.
void po_lock_wait(po_lock *lock);
/// The contended half of `po_lock_unlock`: wakes one sleeper.
void po_lock_wake(po_lock *lock);

/// Takes the lock: one compare-and-swap when it is free.
static inline void po_lock_lock(po_lock *lock) {
  uint32_t expected = 0;
  if (!atomic_compare_exchange_strong_explicit(
          (_Atomic(uint32_t) *)&lock->state, &expected, 1, memory_order_acquire,
          memory_order_relaxed)) {
    po_lock_wait(lock);
  }
}

/// Lets go of the lock, held by the calling thread: one exchange, and a wake-up only if a thread
/// may sleep on it.
static inline void po_lock_unlock(po_lock *lock) {
  if (atomic_exchange_explicit((_Atomic(uint32_t) *)&lock->state, 0, memory_order_release) == 2) {
    po_lock_wake(lock);
  }
}

#endif

#endif
