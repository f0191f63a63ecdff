/* teams-bench-line-scan: what a steal scan's reads cost, for tools/teams-sim.
 *
 * A thief's scan reads one range word per victim, each on its own cache line
 * and last written by its owner on another core.  The reads do not depend on
 * each other, so an out-of-order core issues the next before the last one's
 * line arrived.  This program measures that overlap: a writer thread on one
 * CPU increments N padded words; then a reader on another CPU reads them
 *   scan   in a shuffled order, each read independent (a steal scan), and
 *   chain  in the same order, each address depending on the value read
 *          before (no overlap possible),
 * and prints the median ns per line of each and their ratio, which
 * teams-sim's SCAN_OVERLAP is taken from.  Not a test: it times.
 *
 * Usage: teams-bench-line-scan [lines] [rounds]   (default 256, 2001) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct line {
  _Alignas(64) _Atomic uint64_t word;
} line;

static line *lines;
static uint32_t *order;
static size_t n;
static _Atomic long phase; /* odd: the writer's turn; -1: stop */

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin(int cpu) {
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(cpu, &m);
  return pthread_setaffinity_np(pthread_self(), sizeof m, &m);
}

static int cpus[2];

static void *writer(void *arg) {
  (void)arg;
  pin(cpus[1]);
  for (long r = 1;; r += 2) {
    long ph;
    while ((ph = atomic_load(&phase)) != r)
      if (ph < 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
      atomic_fetch_add_explicit(&lines[i].word, 1, memory_order_relaxed);
    atomic_store(&phase, r + 1);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  n = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  size_t rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 2001;
  if (n < 2 || rounds < 2) {
    fprintf(stderr, "usage: teams-bench-line-scan [lines >= 2] [rounds]\n");
    return 2;
  }
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0)
    return 1;
  int k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
    if (CPU_ISSET(c, &mask))
      cpus[k++] = c;
  if (k < 2) {
    fprintf(stderr, "teams-bench-line-scan: needs two CPUs\n");
    return 1;
  }
  lines = aligned_alloc(64, n * sizeof *lines);
  order = malloc(n * sizeof *order);
  double *scan = malloc(rounds * sizeof *scan);
  double *chain = malloc(rounds * sizeof *chain);
  if (!lines || !order || !scan || !chain)
    return 1;
  for (size_t i = 0; i < n; i++) {
    atomic_init(&lines[i].word, 0);
    order[i] = (uint32_t)i;
  }
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = n - 1; i > 0; i--) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t j = (size_t)(x % (i + 1));
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  pin(cpus[0]);
  pthread_t w;
  if (pthread_create(&w, NULL, writer, NULL) != 0)
    return 1;
  uint64_t sink = 0;
  size_t ns = 0, nc = 0;
  for (size_t r = 0; r < 2 * rounds; r++) {
    long ph = 2 * (long)r + 1;
    atomic_store(&phase, ph);
    while (atomic_load(&phase) != ph + 1)
      ;
    double t0 = now_ns();
    if (r % 2 == 0) {
      for (size_t i = 0; i < n; i++)
        sink += atomic_load_explicit(&lines[order[i]].word,
                                     memory_order_relaxed);
      scan[ns++] = (now_ns() - t0) / (double)n;
    } else {
      /* the next index depends on the value just read (its top bit is 0
       * for any count this program reaches, but the core cannot know) */
      uint32_t i = order[0];
      for (size_t j = 1; j <= n; j++) {
        uint64_t v =
            atomic_load_explicit(&lines[i].word, memory_order_relaxed);
        sink += v;
        i = order[j % n] ^ (uint32_t)(v >> 63);
      }
      chain[nc++] = (now_ns() - t0) / (double)n;
    }
  }
  atomic_store(&phase, -1);
  pthread_join(w, NULL);
  qsort(scan, ns, sizeof *scan, cmp_double);
  qsort(chain, nc, sizeof *chain, cmp_double);
  double ms = scan[ns / 2], mc = chain[nc / 2];
  printf("line-scan: %zu lines last written on CPU %d, read on CPU %d, "
         "medians of %zu rounds (checksum %llu)\n",
         n, cpus[1], cpus[0], rounds, (unsigned long long)(sink & 1));
  printf("scan   %8.1f ns per line (independent reads)\n", ms);
  printf("chain  %8.1f ns per line (dependent reads)\n", mc);
  printf("overlap %7.1f x\n", mc / ms);
  free(lines), free(order), free(scan), free(chain);
  return 0;
}
