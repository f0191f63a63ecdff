/* teams: per-thread scratch buffers (teams-driver.h).
 *
 * One grow-on-demand buffer per kind and thread, in thread-local storage; a
 * pthread key's destructor frees them when the thread exits (the team's
 * workers, and any host thread that launched).  Growing frees the old
 * buffer first, so a thread holds at most one buffer of each kind.  Sizes
 * are rounded up to 4 KiB at first and to TT_CACHE_PAD after, so a buffer
 * that serves small requests is allocated once. */
#include <pthread.h>
#include <stdlib.h>

#include "teams-driver.h"

#define SCRATCH_MIN 4096

typedef struct scratch {
  void *p[TT__SCRATCH_KINDS];
  size_t size[TT__SCRATCH_KINDS];
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static _Thread_local scratch tls_scratch;

static void scratch_free(void *arg) {
  scratch *s = arg;
  for (int k = 0; k < TT__SCRATCH_KINDS; k++) {
    free(s->p[k]);
    s->p[k] = NULL;
    s->size[k] = 0;
  }
}

static void scratch_key_init(void) {
  pthread_key_create(&scratch_key, scratch_free);
}

void *tt__scratch(tt__scratch_kind kind, size_t size) {
  if ((unsigned)kind >= TT__SCRATCH_KINDS)
    return NULL;
  scratch *s = &tls_scratch;
  if (size <= s->size[kind])
    return s->p[kind];
  size_t want = size < SCRATCH_MIN ? SCRATCH_MIN : size;
  want = (want + TT_CACHE_PAD - 1) & ~(size_t)(TT_CACHE_PAD - 1);
  if (want < size)
    return NULL; /* overflow */
  pthread_once(&scratch_once, scratch_key_init);
  void *p = aligned_alloc(TT_CACHE_PAD, want);
  if (!p)
    return NULL;
  free(s->p[kind]);
  s->p[kind] = p;
  s->size[kind] = want;
  pthread_setspecific(scratch_key, s);
  return p;
}
