/* Helpers of the team's Criterion tests: a region whose chunks count their
 * runs and note where they ran, and a thread that holds the team until
 * released.  Header-only (static inline): each test binary takes what it
 * uses. */
#ifndef TT_TESTS_TEAM_UTIL_H
#define TT_TESTS_TEAM_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "teams/team.h"

#ifndef MAXC
#define MAXC 4096
#endif

typedef struct count_ctx {
  _Atomic int runs[MAXC];
  _Atomic int part[MAXC]; /* participant that ran chunk c */
  pthread_t thread[MAXC];
  _Atomic int started;    /* count_chunk_together: chunks begun */
  int together;           /* ... chunk 0 waits until this many began */
} count_ctx;

static inline void count_chunk(void *p, size_t c) {
  count_ctx *x = p;
  atomic_fetch_add(&x->runs[c], 1);
  atomic_store(&x->part[c], tt_participant());
  x->thread[c] = pthread_self();
}

/* count_chunk, but chunk 0 waits until x->together chunks began: every
 * participant of a static region comes in time, so each runs its own chunk
 * (docs/protocol.md item 10: the holder takes over only a chunk whose
 * participant has not begun by the time its own is done). */
static inline void count_chunk_together(void *p, size_t c) {
  count_ctx *x = p;
  atomic_fetch_add(&x->started, 1);
  if (c == 0)
    while (atomic_load(&x->started) < x->together)
      sched_yield();
  count_chunk(p, c);
}

static inline count_ctx *new_ctx(void) {
  count_ctx *x = calloc(1, sizeof *x);
  cr_assert_not_null(x);
  return x;
}

static inline void reset(count_ctx *x, size_t m) {
  for (size_t c = 0; c < m; c++) {
    atomic_store(&x->runs[c], 0);
    atomic_store(&x->part[c], -2);
  }
  atomic_store(&x->started, 0);
  x->together = (int)m;
}

static inline void expect_once(count_ctx *x, size_t m, size_t p) {
  for (size_t c = 0; c < m; c++)
    cr_assert_eq(atomic_load(&x->runs[c]), 1, "m=%zu p=%zu: chunk %zu ran %d times",
                 m, p, c, atomic_load(&x->runs[c]));
}

static inline void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A thread that runs hold_team_main(h) holds the team (a static region of 2)
 * from h->started until h->release. */
typedef struct hold_team {
  atomic_int started, release;
} hold_team;

static inline void hold_team_chunk(void *ctx, size_t c) {
  hold_team *h = ctx;
  (void)c;
  atomic_store(&h->started, 1);
  while (!atomic_load(&h->release))
    sched_yield();
}

static inline void *hold_team_main(void *arg) {
  tt_foreach_chunk(hold_team_chunk, arg, 2, 2);
  return NULL;
}


/* The kernel's id of the thread called name in this process (a team's
 * workers are teams-wN), or -1. */
static inline pid_t thread_tid(const char *name) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  pid_t tid = -1;
  struct dirent *e;
  while (tid < 0 && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    if (fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = 0;
    fclose(f);
    if (!strcmp(comm, name))
      tid = (pid_t)atoi(e->d_name);
  }
  closedir(d);
  return tid;
}

#endif
