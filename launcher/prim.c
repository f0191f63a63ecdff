/* teams: Linux implementation of prim.h. */
#include "prim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void tt__futex_wait(_Atomic uint32_t *word, uint32_t val) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void tt__futex_wait_ns(_Atomic uint32_t *word, uint32_t val, uint64_t ns) {
  struct timespec rel = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, &rel, NULL, 0);
}

void tt__futex_wake(_Atomic uint32_t *word, int n) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

bool tt__read_small(const char *path, char *buf, size_t cap) {
  /* open/read, not stdio: no allocation, so a read on the monitor thread
   * never holds an allocator lock that a fork() child would inherit held
   * (an ASan build's allocator has no fork handlers). */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  size_t n = 0;
  ssize_t got = 0;
  while (n < cap - 1 && ((got = read(fd, buf + n, cap - 1 - n)) > 0 ||
                         (got < 0 && errno == EINTR)))
    if (got > 0)
      n += (size_t)got;
  close(fd);
  buf[n] = 0;
  return got >= 0 && n > 0;
}

char *tt__read_all(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t cap = 16384, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    ssize_t got = read(fd, buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      free(buf);
      buf = NULL;
      break;
    }
    if (got == 0)
      break;
    n += (size_t)got;
    if (n == cap - 1) {
      char *more = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
      if (!more)
        free(buf);
      buf = more;
      cap *= 2;
    }
  }
  close(fd);
  if (buf)
    buf[n] = 0;
  return buf;
}

uint64_t tt__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

clockid_t tt__thread_clock(pthread_t t) {
  clockid_t id;
  return pthread_getcpuclockid(t, &id) == 0 ? id : CLOCK_THREAD_CPUTIME_ID;
}

uint64_t tt__clock_ns(clockid_t id) {
  struct timespec ts;
  if (id == CLOCK_THREAD_CPUTIME_ID || clock_gettime(id, &ts) != 0)
    return 0;
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

int tt__affinity_of(int tid, tt__cpumask *m) {
  return sched_getaffinity((pid_t)tid, sizeof(cpu_set_t), (cpu_set_t *)m) == 0
             ? 0
             : -errno;
}

int tt__tid(void) { return (int)syscall(SYS_gettid); }

int tt__pid(void) { return (int)getpid(); }

bool tt__first_thread(void) { return tt__tid() == tt__pid(); }

void tt__yield(void) { sched_yield(); }

int tt__cpu_now(void) { return sched_getcpu(); }

int tt__affinity_restore(pthread_t t, const tt__cpumask *m) {
  return -pthread_setaffinity_np(t, sizeof(cpu_set_t), (const cpu_set_t *)m);
}

bool tt__move_off(int cpu) {
  cpu_set_t all, other;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof all, &all) != 0 ||
      !CPU_ISSET(cpu, &all) || CPU_COUNT(&all) < 2)
    return false;
  other = all;
  CPU_CLR(cpu, &other);
  bool moved = sched_setaffinity(0, sizeof other, &other) == 0;
  sched_setaffinity(0, sizeof all, &all);
  return moved;
}

/* ---- memory ----------------------------------------------------------------- */

/* The NUMA system calls through syscall(2): <numaif.h> belongs to libnuma,
 * which the runtime does not depend on.  Values from linux/mempolicy.h. */
#define TT__MPOL_INTERLEAVE 3
#define TT__MPOL_F_MEMS_ALLOWED (1 << 2)

size_t tt__page_size(void) {
  long s = sysconf(_SC_PAGESIZE);
  return s >= 4096 && (s & (s - 1)) == 0 ? (size_t)s : 4096;
}

size_t tt__thp_size(int *always) {
  if (always)
    *always = 0;
  unsigned long long size = 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
  if (f) {
    if (fscanf(f, "%llu", &size) != 1)
      size = 0;
    fclose(f);
  }
  if (size < 4096 || (size & (size - 1)) != 0)
    return 0;
  char mode[128] = "";
  f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f) {
    if (!fgets(mode, sizeof mode, f))
      mode[0] = '\0';
    fclose(f);
  }
  if (strstr(mode, "never]"))
    return 0; /* THP off: madvise asks in vain */
  if (always && strstr(mode, "[always]"))
    *always = 1;
  return (size_t)size;
}

int tt__cpu_node(int cpu) {
  if (cpu < 0)
    return -1;
  char path[64];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
  DIR *d = opendir(path);
  if (!d)
    return -1;
  int node = -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char *end;
    if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' &&
        e->d_name[4] <= '9') {
      long v = strtol(e->d_name + 4, &end, 10);
      if (*end == '\0' && v >= 0 && v < 65536) {
        node = (int)v;
        break;
      }
    }
  }
  closedir(d);
  return node;
}

int tt__mems_allowed(unsigned long *mask, unsigned long maxnode) {
  int mode = 0;
  memset(mask, 0, (maxnode + 8 * sizeof *mask - 1) / (8 * sizeof *mask) *
                      sizeof *mask);
  if (syscall(SYS_get_mempolicy, &mode, mask, maxnode, NULL,
              TT__MPOL_F_MEMS_ALLOWED) != 0)
    return -errno;
  return 0;
}

int tt__mbind_interleave(void *addr, size_t len, const unsigned long *mask,
                         unsigned long maxnode) {
  /* the kernel reads maxnode - 1 bits (an old off-by-one kept for ABI) */
  if (syscall(SYS_mbind, addr, len, TT__MPOL_INTERLEAVE, mask, maxnode + 1,
              0) != 0)
    return -errno;
  return 0;
}

int tt__page_nodes(void *const *pages, size_t n, int *status) {
  if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) !=
      0)
    return -errno;
  return 0;
}
