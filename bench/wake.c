/* teams-bench-wake: what waking a sleeping thread costs on this machine,
 * the bound of every region that finds the team's workers asleep.
 *
 * A waker thread computes for a gap (a busy loop, as a host program does
 * between its launches), then wakes a thread that sleeps in a futex wait,
 * and computes on for a region of R us, as a caller runs its chunks while
 * the woken worker comes.  Per sample it records
 *   call     the futex wake's own time (the caller pays it),
 *   latency  from before the wake to the sleeper's first instruction,
 *   same     whether the sleeper ran on the CPU the waker was on (the
 *            scheduler put it there: it preempts the waker, or waits for it,
 *            instead of running beside it),
 *   after    whether it ran only after the region had ended (it took no
 *            part in it),
 *   preempted  whether the waker lost its CPU during the region (a step of
 *            its clock loop over 5 us).
 * Unpinned (the team's default, TEAMS_PIN=none), then with the waker and the
 * sleeper pinned to two different CPUs, each after gaps of 20, 200 and
 * 1000 us: medians, p90, p99 and the largest, and the fractions.  Not a
 * test: it times.
 *
 * Usage: teams-bench-wake [samples] [region_us]   (default 2000, 10) */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* The sleeper's word (the waker adds one and wakes it), and what it
 * records when it runs: the time and its CPU, then `ran`. */
static _Atomic uint32_t word;
static _Atomic int ran, ran_cpu, stop;
static _Atomic double ran_at;

static void *sleeper(void *arg) {
  uint32_t seen = 0;
  while (!atomic_load(&stop)) {
    while (atomic_load(&word) == seen)
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
    seen = atomic_load(&word);
    atomic_store(&ran_at, now_us());
    atomic_store(&ran_cpu, sched_getcpu());
    atomic_store(&ran, 1);
  }
  return arg;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double at(const double *v, size_t n, double q) {
  size_t i = (size_t)(q * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

static int pin(pthread_t t, int cpu) {
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(cpu, &m);
  return pthread_setaffinity_np(t, sizeof m, &m);
}

/* One line: n samples after `gap` us of the waker's own work. */
static void measure(const char *mode, size_t n, double gap, double region,
                    double *call, double *lat) {
  size_t same = 0, after = 0, preempted = 0;
  for (size_t i = 0; i < n; i++) {
    double e = now_us();
    while (now_us() - e < gap)
      ;
    atomic_store(&ran, 0);
    int cpu = sched_getcpu();
    double t0 = now_us();
    atomic_fetch_add(&word, 1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    double t1 = now_us(), last = t1;
    int lost = 0;
    while (last - t0 < region) {
      double t = now_us();
      lost |= t - last > 5;
      last = t;
    }
    after += !atomic_load(&ran);
    while (!atomic_load(&ran))
      ;
    call[i] = t1 - t0;
    lat[i] = atomic_load(&ran_at) - t0;
    same += atomic_load(&ran_cpu) == cpu;
    preempted += lost;
  }
  qsort(call, n, sizeof *call, cmp);
  qsort(lat, n, sizeof *lat, cmp);
  double k = 100.0 / (double)n;
  printf("%-8s gap %5.0f us: wake call %5.1f us; the sleeper runs after %6.1f us "
         "(p90 %7.1f, p99 %7.1f, max %7.1f); on the waker's CPU %5.1f%%, after "
         "the %.0f-us region %5.1f%%, the waker preempted %5.1f%%\n",
         mode, gap, at(call, n, 0.5), at(lat, n, 0.5), at(lat, n, 0.9),
         at(lat, n, 0.99), lat[n - 1], k * (double)same, region,
         k * (double)after, k * (double)preempted);
  fflush(stdout);
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
  double region = argc > 2 ? atof(argv[2]) : 10;
  if (n < 10 || n > 10000000 || !(region >= 0 && region <= 1e6)) {
    fprintf(stderr, "usage: teams-bench-wake [samples: 10..1e7] [region_us: 0..1e6]\n");
    return 2;
  }
  double *call = malloc(n * sizeof *call), *lat = malloc(n * sizeof *lat);
  if (call == NULL || lat == NULL) {
    fprintf(stderr, "teams-bench-wake: out of memory\n");
    return 1;
  }
  pthread_t t;
  int rc = pthread_create(&t, NULL, sleeper, NULL);
  if (rc != 0) {
    fprintf(stderr, "teams-bench-wake: pthread_create: error %d\n", rc);
    return 1;
  }
  static const double gaps[] = {20, 200, 1000};
  for (size_t g = 0; g < 3; g++)
    measure("unpinned", n, gaps[g], region, call, lat);
  /* Pinned: the waker on the first CPU it may use, the sleeper on the next. */
  cpu_set_t m;
  int cpus[2], k = 0;
  if (sched_getaffinity(0, sizeof m, &m) == 0)
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
      if (CPU_ISSET(c, &m))
        cpus[k++] = c;
  if (k == 2 && pin(pthread_self(), cpus[0]) == 0 && pin(t, cpus[1]) == 0) {
    for (size_t g = 0; g < 3; g++)
      measure("pinned", n, gaps[g], region, call, lat);
  } else {
    printf("pinned: left out (fewer than two CPUs to pin to)\n");
  }
  atomic_store(&stop, 1);
  atomic_fetch_add(&word, 1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  pthread_join(t, NULL);
  free(call);
  free(lat);
  return 0;
}
