/* teams: the team's shared state and the layout of its words (internal to
 * the team's files: team.c, fork.c, idle.c, lend.c, lifecycle.c,
 * way-probe.c; way.c, the rule, sees only way.h).
 *
 * Who writes which word, in what order, and why that is correct is
 * docs/protocol.md; each rule is stated again where the code keeps it,
 * citing its item ("protocol 9").  The model launcher/team.pml checks the
 * hand-off and the idle loop.  The files, one mechanism each:
 *
 *   fork.c       publishing a region and joining it: hand_on, the static,
 *                greedy and each regions, the tree, the generation wrap
 *   idle.c       idle workers: spin, then sleep; the sentinel
 *   way.c        how a region runs (the team, OpenMP's threads, the caller
 *                alone), chosen from what each way measured; way-probe.c
 *                measures what it needs at start and reports at exit
 *   lend.c       running a region on OpenMP's threads
 *   lifecycle.c  start, shutdown, fork, and the resizing on a changed CPU
 *                quota or CPU set
 *   team.c       the entry (tt__team_run: the busy rule, then the way) and
 *                the queries */
#ifndef TEAMS_TEAM_STATE_H
#define TEAMS_TEAM_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "prim.h"
#include "team-internal.h"
#include "topology.h"
#include "way.h"

/* ---- words and their layout (protocol 3, 5) ---------------------------------- */

/* worker.go: [gen:29 | CLAIM:1 | STATIC:1 | SLEEP:1]; CLAIM: a static
 * chunk's claim, by its worker or by the holder (protocol 10) */
#define GO_SLEEP 1u
#define GO_STATIC 2u
#define GO_CLAIM 4u
#define GO_GEN_SHIFT 3
#define GEN_MASK ((1u << 29) - 1)

/* region.sync: [gen:30 | closed:1 | left:16 | active:16], high to low */
#define SYNC_ACTIVE_ONE ((uint64_t)1)
#define SYNC_LEFT_ONE ((uint64_t)1 << 16)
#define SYNC_CLOSED ((uint64_t)1 << 32)
#define SYNC_GEN_SHIFT 33
#define SYNC_ACTIVE(w) ((w)&0xffffu)
#define SYNC_LEFT(w) (((w) >> 16) & 0xffffu)
#define SYNC_GEN(w) ((uint32_t)((w) >> SYNC_GEN_SHIFT) & GEN_MASK)

/* Participants are bounded by the 16-bit counters of region.sync. */
#define TT_MAX_PARTICIPANTS 4096

_Static_assert(TT_MAX_PARTICIPANTS < 0xffff, "sync counters are 16 bits");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "futex words are 32 bits");

typedef struct tt__worker {
  /* The hand-off line.  Futex word: exchanged by the holder (or a tree
   * leader), CAS(SLEEP) by this worker (protocol 3, 9). */
  _Alignas(TT_CACHE_PAD) _Atomic uint32_t go;
  /* Sentinel mode: a wake-up of this worker left to the sentinel.  Set by
   * the holder, taken (exchange) by the sentinel or the holder (protocol
   * 21). */
  _Atomic uint32_t wake_req;
  /* The descriptor of the last region handed to this worker: written by its
   * parent before the exchange of go, read by the worker after it saw go
   * change (static) or after it joined (greedy/each) (protocol 4, 8). */
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
  /* The tree (protocol 37-41): this worker's subtree is participants [id,
   * hi), whose other members it hands the region on to (hi == id + 1:
   * none, always so when flat); `up` is the participant whose `done` it
   * adds to after a static chunk (tree set) or, flat, region.sync's
   * `left`.  Up to here the first 64 bytes: a flat hand-off moves one cache
   * line (docs/measurements.md, "The team's words"). */
  bool tree;
  /* Whether this worker was not spinning when the region in its line was
   * published (asleep: woken, or sitting it out): the steal schedule does
   * not keep its block for it (protocol 29).  Written by the holder before
   * the exchange, read by thieves as a hint: relaxed. */
  _Atomic uint8_t late;
  size_t hi, up;
  /* Tree join of a static region: this participant's children add 1 each,
   * it waits for their number.  Reset by this participant before it hands
   * the region on (workers[0].done is the holder's).  In the next line,
   * away from the go word its children's reports would otherwise steal. */
  _Alignas(64) _Atomic uint32_t done;
  /* The clock when the holder made its last wake call to this worker (0:
   * none pending), exchanged to 0 by the worker when it runs again: one
   * sample of the wake's latency (way.h, tt__costs_wake_lat). */
  _Atomic uint64_t wake_at;
  /* Holder-only: the generation of the last flat region this worker sat
   * out, asleep and not woken (its static chunk is the holder's). */
  uint32_t sat_out_gen;
  /* Below: written once at start, then read-only. */
  _Alignas(TT_CACHE_PAD) pthread_t thread;
  clockid_t clock; /* its CPU-time clock (lend.c's look) */
  size_t id;
  int cpu;
} tt__worker;

_Static_assert(offsetof(tt__worker, up) + sizeof(size_t) <= 64,
               "the go word and the descriptor share one cache line");

typedef struct tt__region {
  _Alignas(TT_CACHE_PAD) _Atomic uint64_t sync;
  /* The greedy counter is contended by every participant: a line of its own. */
  _Alignas(TT_CACHE_PAD) _Atomic size_t next;
} tt__region;

typedef struct tt__team {
  /* team.owner: 0 or the holder's token (protocol 1). */
  _Alignas(TT_CACHE_PAD) _Atomic uintptr_t owner;
  /* The holder's copy of the running generation for idle workers, relaxed;
   * 0 while no region of the team's runs (protocol 2). */
  _Atomic uint32_t running_gen;
  /* The CPU the holder ran on at its last fork, -1 before the first: idle
   * workers do not spin there (idle.c, "Yielding").  A hint, relaxed, in
   * the line the holder writes at every fork anyway. */
  _Atomic int holder_cpu;
  uint32_t gen;        /* holder-only: the last generation handed out */
  uint32_t resync_gen; /* holder-only: the last resync's (1 or 2) */
  unsigned left_base;  /* holder-only: region.sync's `left` as last known */
  tt__region r;

  /* Configuration and lifecycle: read-mostly. */
  _Alignas(TT_CACHE_PAD) _Atomic int running;
  _Atomic int stopping;
  /* Set while a shutdown waits for the team: try_take then fails, so
   * threads launching back to back cannot starve the shutdown
   * (docs/measurements.md, "The team's words").  A hint: relaxed. */
  _Atomic int closing;
  /* Set by the monitor when the CPUs the team may use changed (lifecycle.c,
   * "Sizing"); the next launch outside a chunk restarts the team.  A hint:
   * relaxed. */
  _Atomic int resize;
  /* From here to tree_min: what every launch reads, in the first 64 bytes
   * beside running (a launch after the host's own work finds the line
   * cold: each line more is a miss). */
  /* Participants, workers + caller.  Written under the lifecycle lock (start
   * before team.running's release store; shutdown while holding the team);
   * tt_team_size reads it with neither, so it is atomic: tt__team_size(). */
  _Atomic size_t size;
  /* The constants of way.h were measured since this start: written by a
   * holder, read before the take as a hint (relaxed); probes counts the
   * failed tries and probe_after is the earliest time of the next (relaxed:
   * a hint too). */
  _Atomic bool probed;
  unsigned probes;
  _Atomic uint64_t probe_after;
  /* way, tree_min and pin are read before the team is taken (the way's
   * choice, the lending test), while a restart may be rewriting them:
   * relaxed atomics.
   * A stale value only picks a worse way for one region; team.c checks
   * lending again once it holds the team. */
  _Atomic int way; /* TEAMS_RUN: 0 the rule's choice, else 1 + the way (way.h) */
  _Atomic size_t
      tree_min;    /* TEAMS_TREE_MIN: regions of this many or more ... */
  size_t tree_k;   /* ... use the tree, of branching TEAMS_TREE_K (held) */
  _Atomic int pin; /* tt_pin */
  /* Read without the team by a thread whose try_take failed, which a
   * restart may be rewriting: relaxed atomic. */
  _Atomic bool busy_wait;
  tt__worker *workers; /* workers[0] unused: participant 0 is the caller */
  uint64_t spin_ns;
  /* How long an idle worker spins after its last chunk or wake-up: the
   * way's model sets it before each team region it chooses (way.c,
   * "Spinning"), TEAMS_SPIN_US when set (spin_fixed) or the way is fixed.
   * Written by the holder before the exchange that publishes a region,
   * read by workers: relaxed. */
  _Atomic uint64_t linger_ns;
  bool spin_fixed;
  /* A spinner yields the CPU between looks once it has waited this long
   * (idle.c, "Yielding"): measured at start. */
  uint64_t yield_after_ns;
  size_t cpus; /* CPUs the team may use: its default size (cpuset.h) */
  /* Worker slots, written before any worker exists (the sentinel scans
   * them; size, the workers actually made, is known only later). */
  size_t slots;
  bool sentinel_mode; /* TEAMS_IDLE=sentinel */
  size_t requested;
  double start_ms;
  int caller_cpu;
  pthread_t pinned_caller;
  bool has_pinned_caller;
  tt__cpumask caller_mask; /* the pinned caller's mask before pinning */
  char degraded[160];

  /* Sentinel mode: the sentinel's id (0: none), and a counter the holder
   * bumps when it leaves wake-ups to it (protocol 20, 21).  Polled by the
   * sentinel only; in a line of their own. */
  _Alignas(TT_CACHE_PAD) _Atomic uint32_t sentinel_id;
  _Atomic uint32_t wake_seq;

  /* Workers not asleep: fetch_sub before a worker sleeps, fetch_add after.
   * Read by spinning workers to tell an overcommitted machine (protocol
   * 19). */
  _Alignas(TT_CACHE_PAD) _Atomic size_t awake;
  /* CPUs that the process's other threads (not a caller, not the team's:
   * OpenMP's, spinning between its regions) kept busy at the last look
   * (lend.c, tt__lend_spinning), counted by the overcommit rule (protocol
   * 19).  Written by the lending thread, read by workers: a relaxed hint. */
  _Atomic uint32_t others_busy;
} tt__team;

extern tt__team tt__the_team;

static inline size_t tt__team_size(void) {
  return tt_atomic_load_relaxed(&tt__the_team.size);
}

/* Per thread, in one struct: a thread-local variable of a shared library
 * costs a __tls_get_addr call in each function that names it, so a region
 * takes its thread's struct once (tt__me) and hands it down (one call per
 * region, where four variables in three files cost ten).
 *   self      participant index inside a chunk, -1 outside;
 *   depth     chunks nested on this thread (> 0: inside one);
 *   parallel  running a chunk of a region on the team or OpenMP's threads
 *             (tt__region_parallel), not of a serial one;
 *   first     lend.c: 1 the process's first thread, -1 another, 0 unknown;
 *   loops     way.c's table of this thread's loops.
 * Its address is the thread's token in team.owner (protocol 1). */
typedef struct tt__thread {
  int self, depth;
  bool parallel;
  signed char first;
  double share; /* tt__region_share's, for the region this thread holds */
  tt__loops loops;
} tt__thread;

extern _Thread_local tt__thread tt__thr;

/* The empty asm makes the address opaque: without it GCC propagates
 * &tt__thr into the callees it is handed to and computes it again, a
 * __tls_get_addr call, at every use (4 calls per serial region). */
static inline tt__thread *tt__me(void) {
  tt__thread *me = &tt__thr;
  __asm__("" : "+r"(me));
  return me;
}

/* Runs body with thread me marked as participant `self` of a region
 * (parallel: of a region on the team or OpenMP's threads, not a serial
 * one), restoring its previous marks after. */
#define TT__AS_PARTICIPANT(me, who, par, body)                                 \
  do {                                                                         \
    int saved_self_ = (me)->self;                                              \
    bool saved_parallel_ = (me)->parallel;                                     \
    (me)->self = (int)(who);                                                   \
    (me)->depth++;                                                             \
    (me)->parallel = (par);                                                    \
    body;                                                                      \
    (me)->parallel = saved_parallel_;                                          \
    (me)->depth--;                                                             \
    (me)->self = saved_self_;                                                  \
  } while (0)

/* ---- between the files -------------------------------------------------------- */

/* fork.c: the next region's go word (next_go, with its resync before the
 * generation wraps), and a region on the team: publish, the holder's share,
 * the join.  Precondition: the caller holds the team; 2 <= p <= size.
 * own (may be NULL) receives the holder's own share's time and chunk count,
 * for the way's serial estimate (way.c). */
typedef struct tt__own {
  uint64_t ns;
  size_t chunks;
  size_t woken; /* sleeping workers the holder woke */
} tt__own;
uint32_t tt__next_go(tt__thread *me, uint32_t flags);
/* wake: wake the workers that sleep; else a flat region leaves them out
 * (they sit it out: a static chunk of theirs is the holder's, protocol 10). */
void tt__run_parallel(tt__thread *me, void (*f)(void *, size_t), void *ctx,
                      size_t m, size_t p, tt__mode mode, bool wake,
                      tt__own *own);
/* fork.c: the region a worker found in its go word *seen: claim and run
 * its part, hand it on (tree), report or leave; *seen becomes the word as
 * the claim left it.  Returns false when the worker ran nothing of it: a
 * static chunk the holder claimed first, or a stale greedy/each region it
 * did not join (then nothing of it was read). */
bool tt__worker_region(tt__worker *w, uint32_t *seen);
/* fork.c: run_greedy's claims, shared with lend.c.  Returns the chunks run. */
size_t tt__run_greedy(_Atomic size_t *next, void (*f)(void *, size_t),
                      void *ctx, size_t m, size_t p);

/* idle.c: the worker thread; the holder's wait for participants (spin,
 * then yield, at once when overcommitted); the wake-ups left to the
 * sentinel; more of the team's threads awake than CPUs. */
void *tt__worker_main(void *arg);
void tt__wake_requested(size_t upto);
bool tt__overcommitted(void);
/* Measures what idle.c's yield rule needs (at team start). */
uint64_t tt__yield_threshold_ns(void);

/* The holder's (and a tree leader's) wait for participants that run chunks
 * of unknown length: spin while that is cheap, then yield the CPU between
 * looks, at once when the team is overcommitted: the CPU is what the
 * participants it waits for need (idle.c, "Yielding").  The clock is read
 * once every 64 looks. */
static inline void tt__wait_until(bool (*cond)(const void *arg),
                                  const void *arg) {
  uint64_t since = 0;
  for (unsigned k = 1; !cond(arg); k++) {
    if (k % 64 == 0 && (tt__overcommitted() ||
                        (since ? tt__now_ns() - since >= tt__the_team.yield_after_ns
                               : (since = tt__now_ns(), false))))
      tt__yield();
    else
      tt__cpu_relax();
  }
}

/* idle.c: why workers slept, and how often one moved off its holder's
 * CPU, for TEAMS_DEBUG's report at exit. */
extern _Atomic uint64_t tt__sleeps_spun, tt__sleeps_overcommitted,
    tt__sleeps_beside_holder, tt__moves_off_holder;

/* lifecycle.c */
int tt__ensure_started(void);
bool tt__try_take(tt__thread *me);
void tt__take_waiting(tt__thread *me);
void tt__release(void);
/* The monitor asked for a resize: restart the team (lifecycle.c, "Sizing").
 * Precondition: not inside a chunk, the team not held by the caller. */
void tt__resize_now(void);

#endif
