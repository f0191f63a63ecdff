/* cpuset-probe: a program built with an OpenMP compiler flag (gcc -fopenmp:
 * libgomp; clang -fopenmp=libomp: libomp) and linked to libteams, run by
 * tests/test-cpuset.c in child processes with OMP_PROC_BIND/OMP_PLACES set.
 *
 *   cpuset-probe [--omp-first]
 *
 * --omp-first runs an OpenMP parallel region before the team starts (libomp
 * binds the initial thread there).  Prints, on stdout:
 *   omp places N bind B                     asked after the team started
 *   size N                                  the team's size
 *   chunk C participant P tid T cpu U mask LIST   one line per chunk of a
 *                                           static region on the whole team
 * and the team's TEAMS_DEBUG lines on stderr when TEAMS_DEBUG=1. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "teams/team.h"

#define MAXP 64

typedef struct seen {
  int participant, tid, cpu;
  char mask[128];
} seen;

static void list_of(const cpu_set_t *s, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = 0;
  for (int c = 0; c < CPU_SETSIZE && k + 16 < len; c++)
    if (CPU_ISSET(c, s))
      k += (size_t)snprintf(buf + k, len - k, "%s%d", k ? "," : "", c);
}

/* Chunks begun; chunk 0 waits until all `m` began, so that every
 * participant comes in time and runs its own chunk (the caller takes over
 * only a chunk whose participant has not begun by the time its own is
 * done, docs/protocol.md item 10). */
static _Atomic size_t begun, m_all;

static void chunk(void *ctx, size_t c) {
  seen *s = (seen *)ctx + c;
  atomic_fetch_add(&begun, 1);
  while (c == 0 && atomic_load(&begun) < atomic_load(&m_all))
    sched_yield();
  s->participant = tt_participant();
  s->tid = (int)syscall(SYS_gettid);
  s->cpu = sched_getcpu();
  cpu_set_t m;
  if (sched_getaffinity(0, sizeof m, &m) == 0)
    list_of(&m, s->mask, sizeof s->mask);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--omp-first")) {
#pragma omp parallel
    {
      if (omp_get_thread_num() < 0)
        puts("never");
    }
  }
  /* the team first: libomp's place query binds the initial thread */
  size_t n = tt_team_size();
  printf("omp places %d bind %d\n", omp_get_num_places(), (int)omp_get_proc_bind());
  printf("size %zu\n", n);
  seen s[MAXP];
  memset(s, 0, sizeof s);
  size_t m = n < MAXP ? n : MAXP;
  atomic_store(&m_all, m);
  if (tt_foreach_chunk(chunk, s, m, m) != 0)
    return 1;
  for (size_t c = 0; c < m; c++)
    printf("chunk %zu participant %d tid %d cpu %d mask %s\n", c, s[c].participant,
           s[c].tid, s[c].cpu, s[c].mask);
  tt_team_shutdown();
  return 0;
}
