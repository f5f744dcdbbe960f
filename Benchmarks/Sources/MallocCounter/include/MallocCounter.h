#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdint.h>

/// Heap allocations made by the calling thread since it started.
uint64_t mc_allocations(void);
/// Live heap bytes (usable sizes) allocated minus freed by the calling thread.
int64_t mc_live_bytes(void);
/// Whether the interposer is active (malloc in this process goes through it).
int mc_is_active(void);
/// Returns the heap's free memory to the system (glibc's malloc_trim(0)); nothing elsewhere.
void mc_trim(void);

#endif
