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

#endif
