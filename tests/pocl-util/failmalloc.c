/* The allocation-failure injector (failmalloc.h).
 *
 * Concurrency: fm_arm writes the library ranges and the target while
 * disarmed, then publishes the scope with a release store; an allocating
 * thread reads the scope with an acquire load and everything else after
 * it.  The count is one atomic counter over all threads, so which thread
 * gets the n-th failure is decided by the order the threads allocate in. */
#include "failmalloc.h"

#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

#define FM_EXPORT __attribute__((visibility("default")))
#define MAX_RANGES 32

typedef struct range {
  uintptr_t lo, hi, base;
  unsigned scope;
  const char *name;
} range;

static range ranges[MAX_RANGES];
static int nranges;
static unsigned found; /* scopes with at least one range */
static _Atomic unsigned armed;
static _Atomic unsigned long target, count;
static _Atomic uintptr_t failed_at; /* return address of the failed call */

static const struct {
  const char *part;
  unsigned scope;
} libs[] = {
    {"libpocl-devices-pthread.so", FM_DRIVER},
    {"libteams.so", FM_TEAMS},
    {"libpocl.so", FM_POCL},
    {"libpocl-devices-basic.so", FM_BASIC},
};

static int add_ranges(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  const char *name = info->dlpi_name;
  if (name == NULL)
    return 0;
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  for (size_t l = 0; l < sizeof libs / sizeof libs[0]; l++) {
    if (strncmp(base, libs[l].part, strlen(libs[l].part)) != 0)
      continue;
    for (int i = 0; i < info->dlpi_phnum; i++) {
      const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
          nranges == MAX_RANGES)
        continue;
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      ranges[nranges++] = (range){lo, lo + ph->p_memsz, info->dlpi_addr,
                                  libs[l].scope, name};
      found |= libs[l].scope;
    }
  }
  return 0;
}

static const range *range_of(uintptr_t a) {
  for (int i = 0; i < nranges; i++)
    if (a >= ranges[i].lo && a < ranges[i].hi)
      return &ranges[i];
  return NULL;
}

FM_EXPORT int fm_arm(unsigned long n, unsigned scope) {
  atomic_store_explicit(&armed, 0, memory_order_seq_cst);
  /* Libraries stay where they were loaded: look them up again only for
   * scopes not seen yet. */
  if ((scope & ~(unsigned)FM_ANY & ~found) != 0) {
    nranges = 0;
    found = 0;
    dl_iterate_phdr(add_ranges, NULL);
    if ((scope & ~(unsigned)FM_ANY & ~found) != 0)
      return -1;
  }
  atomic_store_explicit(&count, 0, memory_order_relaxed);
  atomic_store_explicit(&failed_at, 0, memory_order_relaxed);
  atomic_store_explicit(&target, n, memory_order_relaxed);
  atomic_store_explicit(&armed, scope, memory_order_release);
  return 0;
}

FM_EXPORT unsigned long fm_disarm(void) {
  atomic_store_explicit(&armed, 0, memory_order_seq_cst);
  return atomic_load_explicit(&count, memory_order_relaxed);
}

FM_EXPORT const char *fm_injected_at(uintptr_t *offset) {
  uintptr_t a = atomic_load_explicit(&failed_at, memory_order_relaxed);
  if (a == 0)
    return NULL;
  const range *r = range_of(a);
  *offset = r ? a - r->base : a;
  return r ? r->name : "?";
}

/* 1 when the allocation called from ra must fail. */
static int fail_now(void *ra) {
  unsigned s = atomic_load_explicit(&armed, memory_order_acquire);
  if (s == 0)
    return 0;
  if (!(s & FM_ANY)) {
    const range *r = range_of((uintptr_t)ra);
    if (r == NULL || !(r->scope & s))
      return 0;
  }
  unsigned long k = atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
  if (k + 1 != atomic_load_explicit(&target, memory_order_relaxed))
    return 0;
  atomic_store_explicit(&failed_at, (uintptr_t)ra, memory_order_relaxed);
  return 1;
}

FM_EXPORT void *malloc(size_t size) {
  if (fail_now(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_malloc(size);
}

FM_EXPORT void *calloc(size_t n, size_t size) {
  if (fail_now(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_calloc(n, size);
}

FM_EXPORT void *realloc(void *p, size_t size) {
  /* realloc(p, 0) frees: not an allocation that can fail. */
  if (size != 0 && fail_now(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_realloc(p, size);
}

FM_EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0)
    return EINVAL;
  if (fail_now(__builtin_return_address(0)))
    return ENOMEM;
  void *p = __libc_memalign(align, size);
  if (p == NULL)
    return ENOMEM;
  *out = p;
  return 0;
}

FM_EXPORT void *aligned_alloc(size_t align, size_t size) {
  if (fail_now(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_memalign(align, size);
}

FM_EXPORT void *memalign(size_t align, size_t size) {
  if (fail_now(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_memalign(align, size);
}
