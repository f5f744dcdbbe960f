// The counter's and the lock's fast paths are inline, in the header; the lock's contended paths
// are here.
#if defined(__linux__) && !defined(_GNU_SOURCE)
// `syscall`, which strict C modes leave undeclared; defined before any header is included.
#define _GNU_SOURCE
#endif
#include "PropertyObservationAtomics.h"

#if defined(__linux__)

#include <sys/syscall.h>
#include <unistd.h>

// The futex operations, as <linux/futex.h> defines them (FUTEX_WAIT or FUTEX_WAKE with
// FUTEX_PRIVATE_FLAG: the word is not shared with another process). Spelled out so that the
// kernel's headers need not be installed (musl's and Android's C libraries do not ship them).
enum { poFutexWaitPrivate = 0 | 128, poFutexWakePrivate = 1 | 128 };

/// How many times a contended `po_lock_lock` looks at the lock before it sleeps. The library holds
/// a lock for a few dozen instructions, far less than a futex sleep and wake-up cost, so a holder
/// running on another core usually lets go within the spin (glibc's adaptive mutex spins as
/// long).
static const int spinsBeforeSleeping = 100;

static inline void relaxProcessor(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

void po_lock_wait(po_lock *lock) {
  _Atomic(uint32_t) *state = (_Atomic(uint32_t) *)&lock->state;
  for (int spin = 0; spin < spinsBeforeSleeping; spin++) {
    uint32_t seen = atomic_load_explicit(state, memory_order_relaxed);
    if (seen == 0) {
      uint32_t expected = 0;
      if (atomic_compare_exchange_weak_explicit(
              state, &expected, 1, memory_order_acquire, memory_order_relaxed)) {
        return;
      }
    } else if (seen == 2) {
      // Others sleep on it already: spinning would only delay joining them.
      break;
    }
    relaxProcessor();
  }
  // Marked 2 before sleeping, so that the holder's unlock wakes a sleeper. Taken with 2 as well:
  // this thread cannot tell whether others still sleep, so its unlock wakes one to be sure.
  while (atomic_exchange_explicit(state, 2, memory_order_acquire) != 0) {
    // Returns at once if the word is no longer 2 (EAGAIN), or on a spurious wake-up: either
    // way the exchange looks again.
    syscall(SYS_futex, state, poFutexWaitPrivate, 2, NULL, NULL, 0);
  }
}

void po_lock_wake(po_lock *lock) {
  syscall(SYS_futex, &lock->state, poFutexWakePrivate, 1, NULL, NULL, 0);
}

#endif
