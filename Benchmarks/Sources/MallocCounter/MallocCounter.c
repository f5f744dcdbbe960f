// Counts heap allocations by defining malloc and friends in the executable itself: the dynamic
// linker binds every shared library's calls (the Swift runtime's swift_slowAlloc included) to
// these definitions, which forward to glibc's own entry points. Counters are thread-local, so
// counting costs no atomic operation and never perturbs the timed loops of other threads.
#include "MallocCounter.h"

#if defined(__linux__) && defined(__GLIBC__)

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread uint64_t allocations;
static __thread int64_t liveBytes;
static int active;

static inline void *counted(void *pointer) {
  if (pointer) {
    allocations += 1;
    liveBytes += (int64_t)malloc_usable_size(pointer);
    active = 1;
  }
  return pointer;
}

void *malloc(size_t size) { return counted(__libc_malloc(size)); }

void *calloc(size_t count, size_t size) { return counted(__libc_calloc(count, size)); }

void *realloc(void *pointer, size_t size) {
  if (pointer) liveBytes -= (int64_t)malloc_usable_size(pointer);
  void *result = __libc_realloc(pointer, size);
  if (result) {
    allocations += 1;
    liveBytes += (int64_t)malloc_usable_size(result);
  } else if (pointer && size != 0) {
    liveBytes += (int64_t)malloc_usable_size(pointer);
  }
  return result;
}

void *memalign(size_t alignment, size_t size) {
  return counted(__libc_memalign(alignment, size));
}

void *aligned_alloc(size_t alignment, size_t size) {
  return counted(__libc_memalign(alignment, size));
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  void *pointer = counted(__libc_memalign(alignment, size));
  if (!pointer) return ENOMEM;
  *result = pointer;
  return 0;
}

void free(void *pointer) {
  if (!pointer) return;
  liveBytes -= (int64_t)malloc_usable_size(pointer);
  __libc_free(pointer);
}

uint64_t mc_allocations(void) { return allocations; }
int64_t mc_live_bytes(void) { return liveBytes; }
int mc_is_active(void) { return active; }
void mc_trim(void) { malloc_trim(0); }

#else

uint64_t mc_allocations(void) { return 0; }
int64_t mc_live_bytes(void) { return 0; }
int mc_is_active(void) { return 0; }
void mc_trim(void) {}

#endif
