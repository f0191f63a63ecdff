/* teams: Linux implementation of prim.h. */
#include "prim.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void tt__futex_wait(_Atomic uint32_t *word, uint32_t val) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void tt__futex_wake(_Atomic uint32_t *word, int n) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

uint64_t tt__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tt__pin_self(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    return -EINVAL;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  return -rc;
}

int tt__thread_create(pthread_t *t, void *(*fn)(void *), void *arg,
                      const tt__cpumask *mask) {
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc)
    return -rc;
  /* Kernels run on workers' stacks: 8 MiB like a main thread would have, so
   * work-group code with private arrays behaves the same on every participant. */
  pthread_attr_setstacksize(&attr, 8u << 20);
  /* Set before the thread runs: a worker of a caller that OpenMP pinned to
   * one CPU would otherwise start on that CPU. */
  if (mask)
    pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t), (const cpu_set_t *)mask);
  rc = pthread_create(t, &attr, fn, arg);
  if (rc == EINVAL && mask) { /* a CPU gone offline since: the caller's mask */
    pthread_attr_destroy(&attr);
    return tt__thread_create(t, fn, arg, NULL);
  }
  pthread_attr_destroy(&attr);
  return -rc;
}

_Static_assert(sizeof(tt__cpumask) == sizeof(cpu_set_t), "mask sizes");

int tt__affinity_save(tt__cpumask *m) {
  return -pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), (cpu_set_t *)m);
}

int tt__affinity_restore(pthread_t t, const tt__cpumask *m) {
  return -pthread_setaffinity_np(t, sizeof(cpu_set_t), (const cpu_set_t *)m);
}
