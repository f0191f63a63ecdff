/* An allocation-failure injector for tests (tests/test-pocl-alloc.c).
 *
 * libtt_failmalloc.so defines malloc, calloc, realloc, posix_memalign,
 * aligned_alloc and memalign in front of glibc's (a test links it, so the
 * dynamic linker finds these first, also for libraries dlopened later, such
 * as the ICD's libpocl and its drivers).  Disarmed, each forwards to glibc's
 * allocator (__libc_malloc and friends: no dlsym, which itself allocates).
 * Armed with fm_arm(n, scope), it counts the allocations whose caller lies
 * in one of the scope's libraries and fails the n-th one (NULL, or ENOMEM
 * from posix_memalign), once.  The caller is the return address of the
 * allocation call, compared with the executable segments of the libraries,
 * which fm_arm looks up: a library's calls through libc (strdup) count as
 * libc's, not the library's.  Not for sanitizer builds: ASan and TSan own
 * malloc there. */
#ifndef TEAMS_FAILMALLOC_H
#define TEAMS_FAILMALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Whose allocations count. */
enum {
  FM_DRIVER = 1, /* libpocl-devices-pthread.so: the teams driver (or PoCL's
                    pthread driver, on the system ICD) */
  FM_TEAMS = 2,  /* libteams.so: the team and the launcher */
  FM_POCL = 4,   /* libpocl.so: PoCL's runtime */
  FM_BASIC = 8,  /* libpocl-devices-basic.so: PoCL's basic driver */
  FM_ANY = 16    /* every caller */
};

/* Fails the n-th (n >= 1) counted allocation from now on.  Returns 0, or -1
 * when a library the scope names is not loaded (nothing armed then). */
int fm_arm(unsigned long n, unsigned scope);

/* Stops failing; returns the number of allocations counted since fm_arm. */
unsigned long fm_disarm(void);

/* Whether the armed failure happened since the last fm_arm; if so, where:
 * the library and the offset of the caller's return address in it, for
 * addr2line -e LIB OFFSET (NULL if not injected). */
const char *fm_injected_at(uintptr_t *offset);

#endif
