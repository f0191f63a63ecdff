/* teams: the operating-system primitives the runtime needs (internal).
 *
 * Futexes, the clock, CPU affinity, thread ids and creation, and the reads
 * of procfs, sysfs and cgroupfs sit behind this one contract, so that the
 * team's files read as scheduling logic.  Linux only. */
#ifndef TEAMS_PRIM_H
#define TEAMS_PRIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Sleep while *word == val (returns at once if it differs, on a wake-up, or
 * spuriously: callers re-check).  Private futex: the word lives in one
 * process. */
void tt__futex_wait(_Atomic uint32_t *word, uint32_t val);
/* tt__futex_wait that also returns after about ns nanoseconds. */
void tt__futex_wait_ns(_Atomic uint32_t *word, uint32_t val, uint64_t ns);
/* Wake up to n threads sleeping on word. */
void tt__futex_wake(_Atomic uint32_t *word, int n);

/* Reads a small file (procfs, sysfs, cgroupfs) into buf, NUL-terminated;
 * false when it cannot or when it is empty.  No allocation: the monitor's
 * looks (lifecycle.c) use it. */
bool tt__read_small(const char *path, char *buf, size_t cap);
/* Reads a whole file of any length (procfs files have no size to ask
 * for, /proc/self/mountinfo grows with the mounts), NUL-terminated, into a
 * malloc'd buffer of at most 64 MiB; NULL when it cannot. */
char *tt__read_all(const char *path);

/* Monotonic time in nanoseconds (vDSO; its cost: docs/measurements.md,
 * "The clock"). */
uint64_t tt__now_ns(void);
/* Thread t's CPU-time clock (tt__clock_ns reads it; 0 when it cannot). */
clockid_t tt__thread_clock(pthread_t t);
uint64_t tt__clock_ns(clockid_t id);

/* Spin-wait hint for the core (pause on x86, yield on arm). */
static inline void tt__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Pin the calling thread to one CPU.  Returns 0 or a negative errno. */
int tt__pin_self(int cpu);

/* The calling thread's affinity mask, saved as an opaque value, and given
 * back to thread t, which must be alive (a thread pinned as participant 0
 * gets its own mask back when the team shuts down, so a restart sees the
 * machine again). */
typedef struct tt__cpumask {
  unsigned long bits[16]; /* 1024 CPUs, as glibc's cpu_set_t */
} tt__cpumask;
int tt__affinity_save(tt__cpumask *m);
/* Thread tid's affinity mask (0: the calling thread's); 0 or a negative
 * errno (-ESRCH: no such thread). */
int tt__affinity_of(int tid, tt__cpumask *m);
int tt__affinity_restore(pthread_t t, const tt__cpumask *m);
/* Moves the calling thread off CPU `cpu` and leaves its mask as it was: the
 * mask less that CPU, then the mask again (the first call migrates it, the
 * second lets it stay where it went).  False when the mask has no other
 * CPU or holds not `cpu`, or a call failed; the mask is then unchanged or
 * given back. */
bool tt__move_off(int cpu);

/* The calling thread's kernel id, the process's (its first thread's), and
 * whether the calling thread is the process's first thread. */
int tt__tid(void);
int tt__pid(void);
bool tt__first_thread(void);

/* Gives the CPU to another runnable thread, if any (sched_yield). */
void tt__yield(void);

/* The CPU the calling thread runs on, or -1 (sched_getcpu: glibc reads it
 * from the thread's rseq area, a load). */
int tt__cpu_now(void);

/* Create a joinable thread with an 8 MiB stack, with affinity mask `mask`
 * (NULL: the caller's); returns 0 or a negative errno (the reason a team
 * degrades). */
int tt__thread_create(pthread_t *t, void *(*fn)(void *), void *arg,
                      const tt__cpumask *mask);

/* ---- memory (memory.c) ---------------------------------------------------- */

/* The base page size (sysconf), at least 4096 and a power of two. */
size_t tt__page_size(void);

/* The transparent huge page size (hpage_pmd_size), or 0 when the kernel has
 * none.  *always (may be NULL) is set to 1 when THP is "always" (the kernel
 * then backs any large enough anonymous mapping with huge pages). */
size_t tt__thp_size(int *always);

/* NUMA node of CPU cpu (from sysfs), or -1 when unknown. */
int tt__cpu_node(int cpu);

/* The nodes the process may allocate on (get_mempolicy MPOL_F_MEMS_ALLOWED)
 * as a bit mask of maxnode bits.  Returns 0 or a negative errno (-ENOSYS:
 * no NUMA support in the kernel). */
int tt__mems_allowed(unsigned long *mask, unsigned long maxnode);

/* mbind(addr, len, MPOL_INTERLEAVE, mask, maxnode, 0): addr page aligned.
 * Returns 0 or a negative errno. */
int tt__mbind_interleave(void *addr, size_t len, const unsigned long *mask,
                         unsigned long maxnode);

/* Node of each of the n pages at pages[k] (move_pages(2) with no target
 * nodes: a query) into status[k] (a node, or a negative errno such as
 * -ENOENT for a page not present).  Returns 0 or a negative errno. */
int tt__page_nodes(void *const *pages, size_t n, int *status);

#endif
