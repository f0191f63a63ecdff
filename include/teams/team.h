/* teams: the process-wide thread team.
 *
 * One team of worker threads per process, started at first use (or by
 * tt_team_start) and shared by every user: the launcher API, the PoCL driver
 * and plain C loops, so they never oversubscribe the cores.  The calling
 * thread is always participant 0 of its region.
 *
 * Where a region runs.  A region (tt_foreach_chunk, tt_foreach_range,
 * tt_launch, an ND-range of the PoCL driver) runs every chunk exactly once,
 * in one of three ways, named as TEAMS_RUN's values:
 *   - team: on the team's workers, the caller and up to p - 1 worker
 *     threads of the team;
 *   - openmp: on OpenMP's threads, in a program that links an OpenMP runtime
 *     (libgomp or libomp), an OpenMP parallel region of at most p threads,
 *     OpenMP's thread t being participant t.  Only from the process's first
 *     thread (where an OpenMP program runs its own regions), and never for a
 *     pinned team (TEAMS_PIN), a region along the tree (TEAMS_TREE_MIN) or
 *     tt_mem_touch (its pages stay where its chunks ran);
 *   - serial: on the caller alone, every chunk in order on the calling
 *     thread, tt_participant() 0 throughout.
 * When.  A region runs on the caller alone, whatever TEAMS_RUN says, when
 * m == 1 or p == 1, inside a chunk (nesting), inside an OpenMP parallel
 * region, when the team cannot start, or while another thread holds the
 * team (TEAMS_BUSY=serial, the default; with TEAMS_BUSY=wait it waits for
 * the team instead, but never inside a chunk).  Otherwise TEAMS_RUN decides:
 *   auto    (the default) each loop runs the way that cost least as
 *           measured in this process, and the others are tried again at a
 *           bounded cost (docs/protocol.md items 43-44), so a tiny region
 *           may run serial, and a program whose OpenMP threads hold the
 *           CPUs may have its regions run openmp;
 *   team    always the team's workers;
 *   serial  always the caller alone;
 *   openmp  always OpenMP's threads where a region can be lent, else the
 *           team's workers.
 * The way changes which threads run the chunks, never what runs: a chunk
 * learns its participant from tt_participant() and must not assume a
 * thread of its own. */
#ifndef TEAMS_TEAM_H
#define TEAMS_TEAM_H

#include <stddef.h>
#include <stdint.h>
#include "errors.h"
#include "export.h"
#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run f(ctx, c) once for every chunk c in [0, m) on at most p participants,
 * the caller being participant 0, and return when all have run.
 *   m == p : static region, chunk c runs on participant c; a chunk whose
 *            participant has not started it when the caller is done with
 *            its own runs on the caller, so that a participant the system
 *            does not run never holds the region;
 *   m >  p : greedy region, participants take chunks from one counter, in
 *            batches of (chunks left) / (2 p) that shrink to single chunks as
 *            it drains (guided self-scheduling);
 *   m <  p : p is lowered to m (then static).
 * p larger than the team is clamped to the team size.  The region runs
 * serially on the caller when m == 1, p == 1, when called from inside a chunk
 * (nesting), when the caller is inside an OpenMP parallel region, or when
 * another thread holds the team (unless TEAMS_BUSY=wait).
 * Returns 0, or TT_EINVAL for f == NULL or p == 0 (nothing runs, the team
 * stays usable).  m == 0 is a no-op returning 0. */
TT_EXTERN int tt_foreach_chunk(void (*f)(void *ctx, size_t chunk), void *ctx,
                               size_t m, size_t p);

/* Schedules for ranges and launches.  The enum stays open: new schedules get
 * new values, existing values never change. */
typedef enum tt_schedule {
  TT_SCHED_STATIC = 0, /* p equal blocks, one per participant (block i on
                          participant i unless the team is pinned over
                          several NUMA nodes or LLCs: then dealt over them,
                          memory.h) */
  TT_SCHED_GREEDY = 1, /* grains from one shared counter */
  TT_SCHED_STEAL = 2,  /* p blocks, thieves take from the back (uneven work) */
  TT_SCHED_AUTO = 3    /* the runtime picks */
} tt_schedule;

/* Run f(ctx, begin, end) over disjoint subranges covering [0, n), each a
 * multiple of grain long except possibly the last, on at most p
 * participants.  grain 0 takes the schedule's default: 1 for static and
 * auto, about 64 chunks per participant for greedy and steal (what
 * tt_launch and the PoCL driver use).  Like tt_foreach_chunk, it runs as
 * one serial call f(ctx, 0, n) on the caller when there is one grain, one
 * participant, or it is called from inside a chunk.  Returns 0, TT_EINVAL
 * (f == NULL, p == 0, unknown schedule) or TT_EOVERFLOW (n + grain
 * overflows). */
TT_EXTERN int tt_foreach_range(void (*f)(void *ctx, size_t begin, size_t end),
                               void *ctx, size_t n, size_t grain, size_t p,
                               tt_schedule schedule);

/* Start the team now instead of at first use.  Returns 0 or a negative code;
 * a team that could create fewer workers than asked still starts (see
 * tt_team_info). */
TT_EXTERN int tt_team_start(void);

/* Join the workers and free the team.  Waits for a running region to end.
 * The next use starts a fresh team (re-reading the environment and the
 * topology, e.g. after re-pinning).  Must not be called from inside a chunk
 * (returns TT_EBUSY then). */
TT_EXTERN int tt_team_shutdown(void);

/* Number of participants a region can have now (workers + the caller).  It
 * starts the team if it is not running, and, outside a chunk, restarts it
 * when the team found the CPUs it may use changed (a quota or a CPU set,
 * docs/cpus.md): the number is that of a team that exists, which may be
 * smaller than the CPUs (a worker that could not be created,
 * tt_team_info.degraded), and it is the size the next region outside a
 * chunk gets, so that a loop cut into tt_team_size() pieces gives every
 * participant one.  Inside a chunk it never restarts the team (nor does
 * any region there). */
TT_EXTERN size_t tt_team_size(void);

/* Index of the calling thread in the region it is running a chunk of
 * (0 for the caller), or -1 outside any chunk.  In a serial region it is 0. */
TT_EXTERN int tt_participant(void);

/* The public structs keep their size from one version to the next: a field
 * added later takes the place of reserved words of its size (libuv's
 * reserved[]), so that a program built against an older header and the
 * library agree on the struct's size.
 *   - Structs the library fills (tt_team_info, tt_steal_stats, tt_ndrange):
 *     the library leaves reserved as it was or zero; do not read it.  A field
 *     added in version V is filled by libraries from V on (tt_version()):
 *     zero the struct first to read 0 from an older one.
 *   - Structs the library reads (tt_launch_config): zero the whole struct
 *     (a designated initializer does), reserved included; a field added
 *     later reads 0, its default, from a program that does not know it.
 * The sizes on 64-bit targets are checked where the library is built
 * (launcher/version.c) and by tests/test-version.c. */
#define TT_TEAM_INFO_SIZE 128
#define TT_STEAL_STATS_SIZE 128
#define TT_LAUNCH_CONFIG_SIZE 192
#define TT_NDRANGE_SIZE 192

/* Pinning of the team's participants (TEAMS_PIN).  The values never change. */
typedef enum tt_pin {
  TT_PIN_NONE = 0,  /* not pinned: every participant may run on the team's CPUs */
  TT_PIN_CORES = 1, /* one participant per core, in topology order */
  TT_PIN_NUMA = 2   /* spread evenly over the NUMA nodes, contiguous spans */
} tt_pin;

/* Facts about the running team, for tools and tests. */
typedef struct tt_team_info {
  size_t size;          /* participants: workers + caller */
  size_t requested;     /* participants asked for (TEAMS_NUM_THREADS or CPUs) */
  double spin_us;       /* idle spin time before sleeping */
  int busy_wait;        /* 1 when TEAMS_BUSY=wait */
  int sentinel;         /* 1 when TEAMS_IDLE=sentinel */
  tt_pin pinned;        /* TEAMS_PIN (an int-sized enum) */
  double start_ms;      /* time taken by the last team start */
  /* Why fewer workers than requested, or NULL.  A string in the library's
   * storage, unchanged until the next tt_team_shutdown (the team's next
   * start writes it anew): copy it to keep it longer. */
  const char *degraded;
  uint64_t reserved[9]; /* room to grow (above) */
} tt_team_info;

TT_EXTERN int tt_team_get_info(tt_team_info *info);

/* Per-region counters of the steal schedule (see tt_foreach_range). */
typedef struct tt_steal_stats {
  uint64_t steals;         /* successful steals */
  uint64_t moved;          /* indices moved by steals (an index a thief took
                              and another took from it counts twice) */
  uint64_t moved_cross_llc;  /* ... to a thief not sharing the victim's LLC */
  uint64_t moved_cross_node; /* ... to a thief on another NUMA node */
  uint64_t rescues;        /* blocks rescued from owners that never started */
  /* Added with the steal schedule (after the fields above, which stay): */
  uint64_t units;    /* units the range was cut into (grains, or multiples of
                        the grain); 0 before the thread's first steal region */
  uint64_t joined;   /* participants that ran, the caller included */
  uint64_t backoffs; /* pauses before stealing from a running owner */
  uint64_t reserved[8]; /* room to grow (see tt_team_info) */
} tt_steal_stats;

/* Counters of the last steal region run by the calling thread (all zero
 * before its first; reserved zero too).  Regions that ran serially because
 * they were nested in a chunk are not steal regions and leave them alone.  Returns 0 or TT_EINVAL
 * (out == NULL).  moved_cross_llc and moved_cross_node count only moves
 * between participants pinned to known PUs (TEAMS_PIN=cores|numa). */
TT_EXTERN int tt_steal_last_stats(tt_steal_stats *out);

#ifdef __cplusplus
}
#endif
#endif
