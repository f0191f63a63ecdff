/* teams: the process-wide thread team.
 *
 * ---------------------------------------------------------------------------
 * Protocol
 * ---------------------------------------------------------------------------
 * Words and who writes them:
 *
 *   team.owner   CAS 0 -> token by a thread that takes the team (the holder),
 *                store-release 0 by the holder when its region is over.  All
 *                the fields below are written only by the holder, except
 *                where a participant's RMW is named.
 *   team.gen     the holder's generation counter (holder-only, plain), and
 *   team.running_gen  its copy for idle workers (relaxed; same line as owner,
 *                which the holder owns anyway after its CAS).
 *   worker.{f,ctx,m,p,mode,hi,up,tree}  the region's descriptor, copied by
 *                the holder (or a tree leader) into the line of each worker
 *                it hands the region to, so the worker gets it with its go
 *                word: one line moves, not two.
 *   worker.done  the tree join's counter of a participant (workers[0]'s is
 *                the holder's): reset by its owner, fetch_add by its
 *                children in the tree.
 *   worker.go    one 32-bit futex word per worker, in that line:
 *                [gen:30 | STATIC:1 | SLEEP:1].  The holder exchanges it to
 *                (gen|mode) to hand the worker a region; the worker CASes
 *                SLEEP in before it sleeps.
 *   region.next  the greedy chunk counter: fetch_add by every participant,
 *                of a batch that shrinks as it drains (run_greedy).
 *   region.sync  one 64-bit word: [gen:30 | closed:1 | left:16 | active:16]
 *                (high to low).  The holder resets it (CAS loop, keeping
 *                `active`) when publishing a greedy/each region and sets
 *                `closed` at its end; workers fetch_add `active` to join a
 *                greedy/each region, fetch_sub it to leave, and fetch_add
 *                `left` after their static chunk.
 *
 * Publishing region g on p participants: for each worker w in 1..p-1 (only
 * those: a region wakes no one it does not need) write the descriptor into
 * w's line, then
 *     old = exchange(worker[w].go, g|mode)         (acq_rel)
 *     if (old & SLEEP) futex_wake(worker[w].go)
 * The exchange both hands over the region (its release half publishes the
 * descriptor) and tells whether the worker committed to sleeping, so a
 * system call is made only when someone sleeps.  A greedy/each region first
 * resets region.sync to (g, open, left 0, active kept).
 *
 * A worker notices a region by its go word changing (it compares with the
 * word it saw last), so no worker may be handed a word equal to the one it
 * last saw.  Generations grow by one per region, and a worker's last seen
 * word is one handed to it earlier, so no new word can equal it -- until the
 * 30-bit generation wraps.  Before it wraps (every 2^30 - 1 regions) the
 * holder runs an empty static region on every worker (next_go's resync):
 * each worker must see that region's word to run its chunk, so after it
 * every worker's last seen word is the resync's, and the generations the
 * round hands out next are all larger.  The resyncs take generations 1 and
 * 2 in turn, which no region uses: a worker that only a resync named in a
 * whole round still holds the previous resync's word.  Without the resync,
 * a worker that did not look at its go word for a whole round (handed a
 * greedy region that ended without it, or left out of every region) could
 * miss the next one.
 *
 * No lost wake-up: a worker sleeps only after CAS(go: seen -> seen|SLEEP)
 * succeeded, and then futex_wait(go, seen|SLEEP).  The holder's exchange and
 * that CAS are RMWs on the same word, so they are totally ordered: if the CAS
 * came first the exchange returns SLEEP and the holder wakes the worker (the
 * futex re-checks the word, so a wake between CAS and wait is not lost);
 * if the exchange came first the CAS fails and the worker sees the region.
 *
 * Static regions (m == p): worker w runs chunk w and adds 1 to `left`; the
 * holder runs chunk 0 and waits until `left` has grown by p-1.  `left` runs
 * free across static regions (the holder knows its value: only static
 * workers add to it and only the holder resets it), so a static publication
 * does not touch region.sync at all; the holder resets it only before it
 * could overflow into `closed`.  A static region cannot end without every
 * worker it names, so such a worker reads a descriptor that is still its own
 * and needs no join.  Its generation need not be in region.sync: a stale
 * joiner of an earlier greedy/each region finds that region closed.
 *
 * Greedy and each regions: a worker that might be late must not read a
 * descriptor that has been reused (the holder rewrites a worker's line for
 * every region that names the worker).  It joins with one fetch_add(active) and
 * keeps the join only if the word it replaced had its generation and was not
 * closed; otherwise it undoes the add (a stale join).  The holder closes the
 * region with fetch_or(closed) when no chunk is left (greedy) or when its own
 * f(ctx, 0) returned (each), then waits for active == 0.  All of these are
 * RMWs on region.sync, so every join is ordered before or after the close:
 * before, and the holder waits for it; after, and the joiner backs out
 * without touching the descriptor.  A stale join's transient +1 can only
 * delay some later holder's wait, never let it pass early; the reset keeps
 * `active` so that the undo of a stale join cannot underflow.
 *
 * Idle workers (ThreadTeams.jl PR #68): a worker spins on its own go word
 * until a deadline, then sleeps.  The deadline is set spin_ns after the
 * worker's last chunk or its wake-up.  While the region it ran a chunk of
 * still runs (team.running_gen still carries that generation and the team is
 * held) it keeps pushing the deadline out, so a worker that is part of
 * back-to-back loops stays ready for the next one; a worker no running
 * region uses is never pushed, and sleeps after spin_ns however busy the
 * team is.  A worker that misses the gap between two loops and sees the next
 * one in its go word simply takes it: it "comes from a chunk" again.
 *
 * Sharing the CPUs (polite mode): a worker that finds, between two looks at
 * the clock while it spins, that it lost its CPU for a while (another
 * runnable thread got it: an OpenMP runtime's spinning workers, another
 * process) stops spinning: it sleeps at once, and for a polite period after
 * that it sleeps right after each chunk instead of spinning.  A spinner that
 * shares a CPU with another runtime's spinner is the worst of both: each
 * hand-over between the runtimes waits for a scheduler time slice, while a
 * woken sleeper is at least placed by the scheduler as one that did not use
 * its share.  The period doubles (1 ms to 64 ms) each time the worker loses
 * its CPU again before a spin has run out undisturbed, and starts over after
 * one that has or when the last loss is 8 periods old.  A loss is a gap of 50
 * us between two looks at the clock (in the idle loop, or when the worker
 * finds a region waiting) with an involuntary context switch counted since
 * (getrusage: a gap without one is an interrupt or the hypervisor), or a
 * wake-up that waited 200 us for a CPU while other threads want the CPUs
 * (cpus_wanted: more runnable threads than CPUs; the switch is evidence
 * enough, but on the 16-CPU machine the hypervisor alone made wake-ups that
 * late).  A second loss within two periods publishes the period
 * (worker.polite_until), and while it is set the holder leaves the worker out
 * of its regions, as it leaves out workers beyond p: a greedy or each region
 * runs on the others, and a static region's chunk of a left-out worker runs
 * on the holder after its own chunk (so a static region's chunk c runs on
 * participant c, or on participant 0 when c was left out), unless the region
 * is lent to OpenMP (below).  Waking it would cost the region a wake-up that
 * waits for a time slice (40-50 us on the 2-core KVM guest next to libgomp's
 * spinning workers, against 2-3 us of work per chunk) and would take the CPU
 * from the other runtime's thread.  The worker ends its period itself:
 * asleep, it wakes at the period's end (a timed futex wait), and a wake-up
 * that came 200 us late while the CPUs are wanted is one more loss (the next
 * period, doubled, is published at once); one on time clears polite_until,
 * and the next region wakes it as any sleeper.  So the holder never reads the
 * clock for it and never hands a region to a worker that has not just found
 * its CPU free.  The resync hands its word to every worker, polite or not
 * (see the generation wrap).  Only whom the holder hands a region to, and the
 * choice between spinning and sleeping, change: the protocol already allows
 * both, and a timed wait's end is a spurious return of futex_wait to it.  Not
 * in sentinel mode, whose user asked for a spinning worker and which has its
 * own rule for a busy machine (the sentinel steps aside when overcommitted):
 * sleeping workers there would leave no one to take the role once the
 * contention ends, since a sleeper waits for a region.
 *
 * The tree: publishing a region is p - 1 exchanges by the holder, and a
 * static region's end p - 1 adds to `left`, so the critical path of a
 * fork/join is O(p) line transfers (tens of us at 128-512 participants).
 * A region of p >= team.tree_min participants (TEAMS_TREE_MIN, default 32)
 * goes along a tree of branching k = team.tree_k (TEAMS_TREE_K, default 2)
 * instead; smaller ones stay flat, as above.  hand_on: participant i with
 * subtree [i, hi) (the holder: [0, p)) hands the region, with the holder's
 * steps (descriptor, exchange, futex wake when the old word had SLEEP), to
 * the first participant of each of min(k, hi - i - 1) runs that split
 * i+1..hi-1 as tt__block does, longest first, giving each its run as its
 * subtree (worker.hi) and i as its parent (worker.up).  The runs are
 * participant numbers in order, which TEAMS_PIN=cores numbers along the
 * topology (neighbours share an LLC), so a subtree is a set of neighbours;
 * the critical path is at most 2 * ceil(log2 p) line transfers for k = 2
 * (tools/teams-sim's fork/join table and --check).  A leader hands on
 * before it runs its own chunk, and wakes its sleeping members itself
 * (only the holder leaves wake-ups to the sentinel): a member asleep under
 * a sleeping leader is woken once the leader is.  A leader reads its
 * descriptor to hand on only when it may (below): in a static region
 * before its report, in a greedy/each region after a join that succeeded
 * and before it leaves (the holder waits for it, so no later region
 * rewrites its members' lines meanwhile); a stale leader hands on nothing,
 * and its members, like participants >= p, are not handed that region.
 *   The join of a static tree region: each participant resets its own
 * `done` before it hands on, runs its chunk, waits until `done` equals its
 * number of children, then adds 1 to its parent's `done` and reads nothing
 * of its descriptor after that; the holder waits for its own children.  So
 * the holder's wait ends after every chunk, and every add precedes the
 * region's end, so the next reset loses none.  It does not touch
 * region.sync.  Greedy and each regions join, leave and close through
 * region.sync as flat ones: only their hand-off goes along the tree.  The
 * resync before a wrap is a static region on every worker, along the tree
 * when the team is large enough (every static leader hands on, so every
 * worker still sees its word); the shutdown's go word stays flat.
 *
 * The busy rule: tt__team_run runs serially on the caller when it is inside
 * a chunk (nesting), inside an OpenMP parallel region, or when CAS on owner
 * fails (unless TEAMS_BUSY=wait and the caller is not inside a chunk, then it
 * waits for the owner).  Serial can never oversubscribe and never deadlock.
 *
 * Lifecycle: start and shutdown run under team.lifecycle (a mutex).  Start
 * publishes team.running with a release store after the workers exist;
 * shutdown sets team.closing (try_take then fails, so launches run serially
 * and cannot starve it) and takes the team as a holder, so no region runs
 * while workers are told to exit (team.stopping, then a new go word) and
 * joined.  After fork()
 * the child has none of the parent's workers: the atfork child handler
 * forgets them (their memory is leaked on purpose: another thread of the
 * parent may have been using it) and the next use starts a fresh team.
 *
 * Sentinel mode (team.sentinel_mode, TEAMS_IDLE=sentinel, HPX PR #8036): a
 * worker whose deadline passed first tries CAS(team.sentinel_id: 0 -> its
 * id).  The winner does not sleep: it spins on its own go word with no
 * deadline, so the next region that needs it starts without a wake-up; the
 * others sleep as usual.  Not on an overcommitted machine (more of the
 * team's threads awake than CPUs, overcommitted()): a worker then does not
 * take the role, and a sentinel that finds the machine overcommitted
 * resigns as it does when its go word changes, and sleeps.  A spinning
 * sentinel there takes a CPU from the participants (a team of 3 on 2 CPUs,
 * loops of 2: the unused worker as sentinel took 40% of a core and the
 * caller was preempted 17599 times/s in one round of teams-bench's idle
 * section).  And the role goes only to a worker that the latest region was
 * handed to (its last go word's generation is team.running_gen), and a
 * sentinel that a later region passed by resigns: a worker the loops do
 * not use never spins for them, as in sleep mode only a worker that ran a
 * chunk of the running region keeps spinning.  The count alone missed it:
 * with the unused worker the sentinel, the loops' worker, starting late on
 * a loaded machine, slept after its spin, the count fell back, and the
 * unused worker kept (or took again) the role and a CPU
 * (tests/test-team.c sentinel_steps_aside_when_overcommitted failed 3 times
 * in 10 with two other busy threads on the 2-core guest).  To the protocol
 * both are a worker that does not try for the role and a resignation at any
 * moment, which the model makes nondeterministically.  The sentinel also
 * takes the wake-up system calls off the holder:
 *
 *   holder, for each needed worker whose exchange returned SLEEP:
 *       store(worker.wake_req, 1)                               (seq_cst)
 *     then fetch_add(team.wake_seq); s = load(team.sentinel_id) (seq_cst)
 *     if s == 0: for each such worker, if exchange(wake_req, 0) == 1 wake it
 *   sentinel, once when it takes the role (after reading wake_seq), when
 *     wake_seq changed, and once more right after it resigns with
 *     store(team.sentinel_id, 0) (seq_cst), which it does as soon as its
 *     own go word changes: for every worker, if exchange(wake_req, 0) == 1
 *     wake it
 *
 * The holder's store of wake_req and load of team.sentinel_id, and the
 * sentinel's store of 0 and loads of wake_req, are all seq_cst: if the
 * holder read a sentinel id, its wake_req store precedes that sentinel's
 * resignation, so the sentinel's last scan (or an earlier poll) finds it; if
 * it read 0, the holder wakes the worker itself.  Both may find the flag:
 * the exchange on wake_req gives it to exactly one of them.  A delayed wake
 * is harmless (the worker's go word already holds the region; futex_wait
 * re-checks it).  The cost is one core kept busy while the team idles.
 *
 * The model: launcher/team.pml models this protocol for spin and
 * tests/model-check.sh checks it in the test suite (sleep mode, and sentinel
 * mode with -DSENTINEL_MODE, the tree with -DTREE_MIN/-DTREE_K, with
 * mutants that must fail).  It covers
 * try_take/take_waiting and release, run_parallel (next_go and its resync,
 * sync_reset, hand_on: the descriptor hand-off, the exchange and wake, the
 * delegation to the sentinel, run_greedy's claims, the close and the
 * waits, the tree join, and with -DLEAVE_OUT the leaving out of polite
 * workers), worker_main (run_static and its hand-on and tree
 * join, join, run_joined and its hand-on, the CAS to SLEEP and
 * the futex loop), be_sentinel and wake_requested, and tt_team_shutdown; it
 * abstracts the clock (when a worker tries to sleep), `awake`, team.closing
 * (which only makes try_take fail more often), sched_yield and the memory
 * orders.  Change both together.
 *
 * Measured and rejected: one team-wide futex word for all workers (a wake
 * cannot choose which sleepers it wakes, so a region on 2 of 16 participants
 * would wake everyone asleep).
 */
#include "team-internal.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "cpuset.h"
#include "prim.h"
#include "topology.h"

/* ---- words and their layout ------------------------------------------------ */

#define GO_SLEEP 1u
#define GO_STATIC 2u
#define GO_GEN_SHIFT 2
#define GEN_MASK ((1u << 30) - 1)

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

typedef struct worker {
  /* The hand-off line.  Futex word: exchanged by the holder, CAS(SLEEP) by
   * this worker. */
  _Alignas(TT_CACHE_PAD) _Atomic uint32_t go;
  /* Sentinel mode: a wake-up of this worker left to the sentinel.  Set by
   * the holder, taken (exchange) by the sentinel or the holder. */
  _Atomic uint32_t wake_req;
  /* The descriptor of the last region handed to this worker: written by the
   * holder before its exchange of go, read by the worker after it sees go
   * change (static) or after it joined (greedy/each). */
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
  /* The tree (see "The tree" in the protocol): this worker's subtree is
   * participants [id, hi), whose other members it hands the region on to
   * (hi == id + 1: none, always so in the flat protocol); `up` is the
   * participant whose `done` it adds to after a static chunk (tree set) or,
   * flat, region.sync's `left`.  Up to here the first 64 bytes: a flat
   * hand-off moves one cache line (a descriptor that spilled into the next
   * line cost ~50 ns per empty static launch of 2 in teams-bench). */
  bool tree;
  size_t hi, up;
  /* Tree join of a static region: this participant's children add 1 each,
   * it waits for their number.  Reset by this participant before it hands
   * the region on (workers[0].done is the holder's).  In the next line,
   * away from the go word its children's reports would otherwise steal. */
  _Atomic uint32_t done;
  /* Polite mode (in the second line, which the flat hand-off does not
   * write): the end of this worker's polite period (tt__now_ns), or 0.
   * Written (relaxed) by the worker when it loses its CPU, read (relaxed) by
   * the holder before it hands a region over: a worker in its period is
   * left out (run_region).  Either value is safe to act on. */
  _Atomic uint64_t polite_until;
  /* When the holder woke this worker (tt__now_ns, relaxed), taken (exchange
   * to 0) by the worker when it wakes up: how long the wake-up waited for a
   * CPU.  A stale or missing value only changes whether it turns polite. */
  _Atomic uint64_t woke_at;
  /* Below: written once at start, then read-only. */
  _Alignas(TT_CACHE_PAD) pthread_t thread;
  size_t id;
  int cpu;
} worker;

_Static_assert(offsetof(worker, up) + sizeof(size_t) <= 64,
               "the go word and the descriptor share one cache line");

typedef struct region {
  _Alignas(TT_CACHE_PAD) _Atomic uint64_t sync;
  /* The greedy counter is contended by every participant: a line of its own. */
  _Alignas(TT_CACHE_PAD) _Atomic size_t next;
} region;

typedef struct team {
  _Alignas(TT_CACHE_PAD) _Atomic uintptr_t owner;
  _Atomic uint32_t running_gen;
  uint32_t gen;       /* holder-only: the last generation handed out */
  uint32_t resync_gen; /* holder-only: the last resync's (1 or 2) */
  unsigned left_base; /* holder-only: region.sync's `left` as last known */
  region r;

  /* Configuration and lifecycle: read-mostly. */
  _Alignas(TT_CACHE_PAD) _Atomic int running;
  _Atomic int stopping;
  /* Set while a shutdown waits for the team: try_take then fails, so
   * threads launching back to back cannot starve the shutdown (200
   * restart cycles took 136 s under load before).  A hint: relaxed. */
  _Atomic int closing;
  /* Participants, workers + caller.  Written under the lifecycle lock (start
   * before team.running's release store; shutdown while holding the team);
   * tt_team_size reads it with neither, so it is atomic: team_size(). */
  _Atomic size_t size;
  worker *workers; /* workers[0] unused: participant 0 is the caller */
  uint64_t spin_ns;
  size_t cpus; /* CPUs the team may use: its default size (cpuset.h) */
  /* Read without the team by a thread whose try_take failed, which a
   * restart may be rewriting: relaxed atomic. */
  _Atomic bool busy_wait;
  /* Worker slots, written before any worker exists (the sentinel scans
   * them; T.size, the workers actually made, is known only later). */
  size_t slots;
  bool sentinel_mode; /* TEAMS_IDLE=sentinel */
  bool polite;        /* polite mode: TEAMS_POLITE=on (default), not sentinel */
  size_t tree_min;    /* TEAMS_TREE_MIN: regions of this many or more ... */
  size_t tree_k;      /* ... use the tree, of branching TEAMS_TREE_K */
  tt__pin pin;
  size_t requested;
  double start_ms;
  int caller_cpu;
  pthread_t pinned_caller;
  bool has_pinned_caller;
  tt__cpumask caller_mask; /* the pinned caller's mask before pinning */
  char degraded[160];

  /* Sentinel mode: the sentinel's id (0: none), and a counter the holder
   * bumps when it leaves wake-ups to it.  Polled by the sentinel only; last
   * in the struct, whose alignment pads the line. */
  _Alignas(TT_CACHE_PAD) _Atomic uint32_t sentinel_id;
  _Atomic uint32_t wake_seq;

  /* Workers not asleep: fetch_sub before a worker sleeps, fetch_add after.
   * Read by spinning workers to tell an overcommitted machine. */
  _Alignas(TT_CACHE_PAD) _Atomic size_t awake;
} team;

static team T;

static size_t team_size(void) { return tt_atomic_load_relaxed(&T.size); }
static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Per thread: participant index inside a chunk (-1 outside), nesting depth,
 * and a unique token for team.owner (its address). */
static _Thread_local int tls_self = -1;
static _Thread_local int tls_depth;
static _Thread_local bool tls_parallel; /* running a chunk of a team region */
static _Thread_local char tls_token;

/* OpenMP's omp_in_parallel, if the program links an OpenMP runtime, and
 * what lending a region to it needs (see "Lending a region to OpenMP"):
 * GOMP_parallel is libgomp's entry for a parallel region, which LLVM's
 * libomp exports too (its GNU compatibility layer). */
extern int omp_in_parallel(void) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));
extern void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads,
                          unsigned flags) __attribute__((weak));

/* ---- configuration ----------------------------------------------------------- */

/* Default spin before sleeping.  Chosen by bench/teams-bench (idle and
 * wake-up sections, 2-core machine): long enough that a worker of
 * back-to-back loops with short serial gaps between them never sleeps,
 * short enough that an unused worker costs well under 1% of a core.
 * Sweep (TEAMS_SPIN_US=50..1000, `teams-bench --section wake`, medians): a
 * gap longer than the spin costs one wake-up, 26-45 us on the KVM guest
 * whatever the spin (wake_1ms 25.7-27.1 us even at 1000: the worker is
 * asleep by then), while the idle CPU over the gap grows with the spin:
 * 1 ms gaps 5.7 / 10.0 / 18.8 / 45.6 / 89.9% of a core for 50 / 100 / 200 /
 * 500 / 1000 us, 10 ms gaps 0.7 / 1.2 / 2.2 / 5.1 / 10.0%.  A longer spin
 * only moves the gap length at which the wake-up is paid; TEAMS_IDLE=
 * sentinel is the answer when that matters (wake 0.3-2 us). */
#define TT_DEFAULT_SPIN_US 100.0

/* Regions on this many participants or more are published and joined
 * along the tree, of this branching (see "The tree" in the protocol).  The
 * cost model of tools/teams-sim (its fork/join table) counts critical-path
 * line transfers: flat p - 1, the tree with k = 2 at most 2 * ceil(log2 p)
 * (2 log2 p - 2 at powers of two; k = 3 is within one of it up to 512, and
 * checked by teams-sim --check).  They cross below 16, but a tree level
 * also costs its leader's own notice of its go word and a handful of
 * instructions, while the flat holder's exchanges overlap the workers'
 * starts, so the tree starts at 32, where the model gives 8 transfers
 * against 31; measurement on a machine that large should move it.  On the
 * 16-CPU machine (one L3, bench/scaling.sh) the tree was ahead at 16 (empty
 * static region 1.88 us against 2.22 flat, greedy 3.51 against 3.98) and
 * behind at 8 (1.60 against 1.21) and 4 (0.80 against 0.74): one run, so
 * 32 stays.  A 2-core machine never uses it unless TEAMS_TREE_MIN is set
 * (the tests force it). */
#define TT_DEFAULT_TREE_MIN TT__TREE_MIN_DEFAULT
#define TT_DEFAULT_TREE_K TT__TREE_K_DEFAULT

/* Polite mode (see the protocol): a gap this long between two looks at the
 * clock in the idle loop (normally 1-5 us apart) means the worker lost its
 * CPU, and the first polite period, which doubles up to the last. */
#define TT_LOST_CPU_NS 50000u
/* A wake-up that waited this long for a CPU: the futex wake-up itself takes
 * 26-45 us on the 2-core KVM guest (p99 ~57 us) with the CPU free. */
#define TT_LATE_WAKE_NS 200000u
#define TT_POLITE_MIN_NS 1000000u
#define TT_POLITE_MAX_NS 64000000u

/* A spinner that has waited this long yields the CPU between looks: free
 * when no other thread wants the CPU, and when more threads than CPUs are
 * runnable it hands the CPU to one that has work.  Short enough to cost
 * nothing to back-to-back loops, whose gaps are a few microseconds. */
#define TT_POLITE_AFTER_NS 20000u

static double env_double(const char *name, double dflt, double lo, double hi) {
  const char *s = getenv(name);
  if (!s || !*s)
    return dflt;
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "teams: ignoring %s=%s (expected %g..%g)\n", name, s, lo, hi);
    return dflt;
  }
  return v;
}

static int env_choice(const char *name, const char *const *choices, int dflt) {
  const char *s = getenv(name);
  if (!s || !*s)
    return dflt;
  for (int i = 0; choices[i]; i++)
    if (!strcmp(s, choices[i]))
      return i;
  fprintf(stderr, "teams: ignoring %s=%s (unknown value)\n", name, s);
  return dflt;
}

/* ---- workers ------------------------------------------------------------------- */

static bool overcommitted(void);

/* What polite mode did in this process, for TEAMS_DEBUG's report at exit:
 * losses by kind (an idle gap with an involuntary switch, a late wake-up
 * from a holder, a polite sleep's end that came late), periods published
 * (the holder left the worker out), regions lent to OpenMP.  Relaxed
 * counters, bumped only on those rare paths. */
static struct {
  _Atomic uint64_t gap, late_wake, late_timer, published, lent;
  _Atomic uint64_t sleep_spun, sleep_overcommitted, sleep_polite;
} polite_stats;


/* Wait until cond holds.  The holder (and a tree leader) waits for
 * participants that are running chunks of unknown length: spin while that
 * is cheap, then yield the CPU between looks (at once when the team is
 * overcommitted: the CPU is what the participants it waits for need).  The
 * clock is read once every 64 looks. */
#define WAIT_UNTIL(cond)                                                       \
  do {                                                                         \
    uint64_t since_ = 0;                                                       \
    for (unsigned k_ = 0; !(cond); k_++) {                                     \
      if (k_ % 64 == 0 && k_ > 0 &&                                            \
          (overcommitted() ||                                                  \
           (since_ ? tt__now_ns() - since_ >= TT_POLITE_AFTER_NS               \
                   : (since_ = tt__now_ns(), 0))))                             \
        sched_yield();                                                         \
      else                                                                     \
        tt__cpu_relax();                                                       \
    }                                                                          \
  } while (0)

/* What hand_on copies into a child's line (beside the child's subtree). */
typedef struct desc {
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
} desc;

/* Hands the tree region described by d with go word `go` to the children
 * of participant `me`, whose subtree is [me, hi): the first participant of
 * each of min(k, hi - me - 1) runs that split me+1..hi-1 as tt__block does
 * (the longer runs first, handed first), each with its run as its subtree.
 * For each child: its descriptor into its line, then the exchange of its go
 * word, and a wake-up when the old word had SLEEP, which the holder in
 * sentinel mode leaves to the sentinel (wake_req; *asleep counts them).
 * The flat protocol's hand-off is the same steps for every participant
 * 1..p-1, inline in run_region.  Returns the number of children. */
static size_t hand_on(size_t me, size_t hi, uint32_t go, const desc *d,
                      size_t *asleep) {
  size_t rest = hi - me - 1, kids = T.tree_k < rest ? T.tree_k : rest;
  for (size_t j = 0; j < kids; j++) {
    size_t lo, end;
    tt__block(rest, kids, j, &lo, &end);
    lo += me + 1;
    end += me + 1;
    worker *w = &T.workers[lo];
    w->f = d->f;
    w->ctx = d->ctx;
    w->m = d->m;
    w->p = d->p;
    w->mode = d->mode;
    w->hi = end;
    w->up = me;
    w->tree = true;
    uint32_t prev = tt_atomic_exchange_acq_rel(&w->go, go);
    if (!(prev & GO_SLEEP))
      continue;
    if (asleep && T.sentinel_mode) {
      tt_atomic_store_seq_cst(&w->wake_req, 1);
      (*asleep)++;
    } else {
      tt__futex_wake(&w->go, 1);
    }
  }
  return kids;
}

/* A static region's chunk on worker w, handed go word `go`: hand the region
 * on to w's subtree first, then the chunk, then (tree) wait for the
 * children's reports, and report: to `up`'s done (tree) or region.sync's
 * `left` (flat).  Nothing of the descriptor is read after the report. */
static void run_static(worker *w, uint32_t go) {
  size_t kids = 0;
  bool tree = w->tree;
  _Atomic uint32_t *up = tree ? &T.workers[w->up].done : NULL;
  if (tree && w->hi > w->id + 1) {
    desc d = {w->f, w->ctx, w->m, w->p, w->mode};
    tt_atomic_store_relaxed(&w->done, 0);
    kids = hand_on(w->id, w->hi, go, &d, NULL);
  }
  tls_self = (int)w->id;
  tls_depth++;
  tls_parallel = true;
  w->f(w->ctx, w->id);
  tls_parallel = false;
  tls_depth--;
  tls_self = -1;
  if (!tree) {
    tt_atomic_fetch_add_release(&T.r.sync, SYNC_LEFT_ONE);
    return;
  }
  if (kids)
    WAIT_UNTIL(tt_atomic_load_acquire(&w->done) == kids);
  tt_atomic_fetch_add_release(up, 1);
}

/* Join a greedy/each region of generation gen; false when it is over (or a
 * newer one was published), in which case nothing of it may be read. */
static bool join(uint32_t gen) {
  uint64_t old = tt_atomic_fetch_add_acq_rel(&T.r.sync, SYNC_ACTIVE_ONE);
  if (SYNC_GEN(old) == gen && !(old & SYNC_CLOSED))
    return true;
  tt_atomic_fetch_sub_release(&T.r.sync, SYNC_ACTIVE_ONE);
  return false;
}

/* Run chunks of a greedy region from region.next until none is left.
 * Each participant takes a batch per RMW: a share of what its last claim
 * left, (m - seen) / (2 p), at least one chunk (guided self-scheduling on
 * the one counter).  Batches shrink to single chunks as the range drains, so
 * the last chunks still balance one by one; a claim past m is clamped. */
static void run_greedy(_Atomic size_t *next, void (*f)(void *, size_t),
                       void *ctx, size_t m, size_t p) {
  size_t seen = 0, div = 2 * p;
  for (;;) {
    size_t k = seen < m ? (m - seen) / div : 0;
    if (k == 0)
      k = 1;
    size_t b = tt_atomic_fetch_add_relaxed(next, k);
    if (b >= m)
      return;
    size_t e = b + k < m ? b + k : m;
    for (size_t c = b; c < e; c++)
      f(ctx, c);
    seen = e;
  }
}

/* Precondition: joined the region now in w's line, of go word `go`.  The
 * region is handed on to w's subtree (tree) while the join holds it open:
 * the holder waits for this worker to leave, so no later region rewrites
 * the children's lines meanwhile. */
static void run_joined(worker *w, uint32_t go) {
  if (w->tree && w->hi > w->id + 1) {
    desc d = {w->f, w->ctx, w->m, w->p, w->mode};
    hand_on(w->id, w->hi, go, &d, NULL);
  }
  tls_self = (int)w->id;
  tls_depth++;
  tls_parallel = true;
  if (w->mode == TT__MODE_EACH) {
    w->f(w->ctx, w->id);
  } else {
    run_greedy(&T.r.next, w->f, w->ctx, w->m, w->p);
  }
  tls_parallel = false;
  tls_depth--;
  tls_self = -1;
  tt_atomic_fetch_sub_release(&T.r.sync, SYNC_ACTIVE_ONE);
}

/* True while the region of generation gen has not ended. */
static bool region_running(uint32_t gen) {
  return tt_atomic_load_relaxed(&T.owner) != 0 &&
         tt_atomic_load_relaxed(&T.running_gen) == gen;
}

/* Wake every worker whose wake-up was left to the sentinel.  Called by the
 * sentinel, and by the holder when there is no sentinel. */
static void wake_requested(size_t upto) {
  for (size_t i = 1; i < upto; i++)
    if (tt_atomic_load_seq_cst(&T.workers[i].wake_req) &&
        tt_atomic_exchange_seq_cst(&T.workers[i].wake_req, 0))
      tt__futex_wake(&T.workers[i].go, 1);
}

/* More of this team's threads awake than CPUs (the caller counts as one):
 * an idle spinner would take a CPU that a participant with work needs
 * (a static region of 6 on 2 cores: ~57 ms per launch with workers spinning
 * out their time, ~300 us yielding, ~15 us sleeping at once; load ~4).  The
 * idle rule then sleeps at once.  Only a hint: read relaxed. */
static bool overcommitted(void) {
  return (size_t)tt_atomic_load_relaxed(&T.awake) + 1 > T.cpus;
}

/* Sentinel mode: spin, without a deadline, until this worker's go word
 * changes from seen, the machine is overcommitted, or a region other than
 * ran_gen (the last one handed to this worker) starts without it; serve the
 * wake-ups the holder leaves meanwhile.  Precondition: this worker holds
 * team.sentinel_id. */
static void be_sentinel(worker *w, uint32_t seen, uint32_t ran_gen) {
  /* A holder that already read our id from team.sentinel_id may have bumped
   * wake_seq before this load: then its wake_req stores precede the load,
   * and the scan right after it finds them (all seq_cst).  Without that scan
   * such a wake-up waited for our resignation, and a static region that
   * needed the sleeper waited for ever (found by the model check). */
  uint32_t seq = tt_atomic_load_seq_cst(&T.wake_seq);
  wake_requested(T.slots);
  uint64_t since = tt__now_ns();
  for (unsigned k = 0; tt_atomic_load_acquire(&w->go) == seen; k++) {
    if (k % 64 == 0 &&
        (overcommitted() ||
         tt_atomic_load_relaxed(&T.running_gen) != ran_gen))
      break;
    if (k % 64 == 0 && tt__now_ns() - since >= TT_POLITE_AFTER_NS)
      sched_yield();
    else
      tt__cpu_relax();
    uint32_t now = tt_atomic_load_acquire(&T.wake_seq);
    if (now != seq) {
      seq = now;
      wake_requested(T.slots);
    }
  }
  tt_atomic_store_seq_cst(&T.sentinel_id, 0);
  wake_requested(T.slots); /* what was left to us before we resigned */
}


/* Polite mode: whether the worker was switched out involuntarily (another
 * thread took its CPU) since the last call, by its count of involuntary
 * context switches.  A gap in its clock looks without one is an interrupt
 * or the hypervisor's vCPU scheduling, which no politeness helps.  A system
 * call, made only after a gap. */
static bool switched_out(long *nivcsw) {
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0)
    return true;
  bool yes = ru.ru_nivcsw != *nivcsw;
  *nivcsw = ru.ru_nivcsw;
  return yes;
}

static void polite_report(void) {
  unsigned long long gap = tt_atomic_load_relaxed(&polite_stats.gap),
                     late = tt_atomic_load_relaxed(&polite_stats.late_wake),
                     timer = tt_atomic_load_relaxed(&polite_stats.late_timer),
                     spun = tt_atomic_load_relaxed(&polite_stats.sleep_spun),
                     over = tt_atomic_load_relaxed(&polite_stats.sleep_overcommitted),
                     pol = tt_atomic_load_relaxed(&polite_stats.sleep_polite);
  fprintf(stderr,
          "teams: polite: %llu losses (idle gap %llu, late wake-up %llu, late "
          "period end %llu), %llu periods left out, %llu regions lent to "
          "OpenMP; workers slept %llu times: %llu after their spin, %llu "
          "overcommitted, %llu polite\n",
          gap + late + timer, gap, late, timer,
          (unsigned long long)tt_atomic_load_relaxed(&polite_stats.published),
          (unsigned long long)tt_atomic_load_relaxed(&polite_stats.lent),
          spun + over + pol, spun, over, pol);
}

/* Polite mode: a worker's own record of its losses (see "Sharing the
 * CPUs"), and its two steps: a loss, and the end of a period. */
typedef struct polite_state {
  uint64_t until;     /* end of the polite period (tt__now_ns), 0: none */
  uint64_t ns;        /* the next period's length */
  uint64_t last_loss; /* when it last lost its CPU, 0: never */
  bool published;     /* it set its polite_until: the holder leaves it out */
} polite_state;

static void polite_loss(worker *w, polite_state *ps, uint64_t now) {
  bool again = ps->last_loss != 0 && now - ps->last_loss <= 2 * ps->ns;
  if (now - ps->last_loss > 8 * ps->ns)
    ps->ns = TT_POLITE_MIN_NS; /* a loss long after the last starts over */
  ps->last_loss = now;
  ps->until = now + ps->ns;
  /* Left out of regions only when it keeps losing: one loss may be a
   * passing thread, and leaving a worker out costs its share. */
  if (again || ps->published) {
    tt_atomic_store_relaxed(&w->polite_until, ps->until);
    if (!ps->published)
      tt_atomic_fetch_add_relaxed(&polite_stats.published, 1);
    ps->published = true;
  }
  if (ps->ns < TT_POLITE_MAX_NS)
    ps->ns *= 2;
}

static void polite_end(worker *w, polite_state *ps) {
  ps->until = 0;
  if (ps->published) {
    tt_atomic_store_relaxed(&w->polite_until, 0);
    ps->published = false;
  }
}

/* Polite mode: the first number of a small /proc file after `skip` fields
 * (separated by spaces), or -1. */
static long proc_field(const char *path, int skip) {
  char buf[256];
  if (!tt__read_small(path, buf, sizeof buf))
    return -1;
  char *q = buf;
  for (int f = 0; f < skip && q; f++)
    if ((q = strchr(q, ' ')))
      q++;
  return q ? strtol(q, NULL, 10) : -1;
}

/* Runnable threads of this process (state R in /proc/self/task/N/stat), or
 * -1. */
static long process_running(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  long running = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    if (!tt__read_small(path, buf, sizeof buf))
      continue; /* the thread ended */
    char *q = strrchr(buf, ')'); /* the name may hold spaces and parens */
    running += q && q[1] == ' ' && q[2] == 'R';
  }
  closedir(d);
  return running;
}

/* Polite mode: whether other threads want the CPUs now, which makes a late
 * wake-up a loss rather than the machine's own noise.  Either
 * the machine has more runnable threads than CPUs online (/proc/loadavg's
 * fourth field, which counts this worker), or the team's CPUs are a part
 * of the machine (a binding, a container's cpuset or quota) and this
 * process alone has more runnable threads than they are.  Without it the
 * team alone on the 16-CPU machine (16 participants) counted 226 losses in
 * 45500 regions, 197 of them wake-ups made late by the hypervisor, and
 * left workers out for nothing; the 2-core machine next to libgomp's
 * spinners still counts its losses (3 runnable threads for 2 CPUs).  A few
 * system calls, only after a late wake-up; what cannot be read counts as
 * wanted.  (A gap in the idle loop needs no such check: the involuntary
 * switch that confirms it says another thread took this CPU, which a
 * count over all CPUs would miss when threads are bound to a few.) */
static bool cpus_wanted(void) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  long running = proc_field("/proc/loadavg", 3);
  if (online <= 0 || running < 0 || running > online)
    return true;
  if (T.cpus >= (size_t)online)
    return false;
  long mine = process_running();
  return mine < 0 || mine > (long)T.cpus;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  if (w->cpu >= 0)
    tt__pin_self(w->cpu);
  char name[16]; /* shows in /proc/self/task/N/comm, top -H, gdb */
  snprintf(name, sizeof name, "teams-w%zu", w->id);
  pthread_setname_np(pthread_self(), name);
  /* Not a load: a region may have been published before this thread ran,
   * and it must be seen as new.  0 is the value start gave the word. */
  uint32_t seen = 0;
  uint64_t last_event = tt__now_ns(); /* last chunk or wake-up */
  uint64_t deadline = last_event + T.spin_ns;
  uint32_t ran_gen = 0;
  bool ran = false; /* ran a chunk of region ran_gen, which may still run */
  uint64_t last_look = last_event; /* the idle loop's last clock read */
  polite_state ps = {0, TT_POLITE_MIN_NS, 0, false};
  bool late_wake = false;
  long nivcsw = 0; /* involuntary context switches at the last look */

  for (;;) {
    uint32_t go = tt_atomic_load_acquire(&w->go);
    if (go != seen) {
      seen = go;
      if (tt_atomic_load_acquire(&T.stopping))
        break;
      /* A spinner that finds a region waiting when it gets its CPU back
       * never sees the gap in its idle loop: look at the clock here too. */
      if (T.polite && tt__now_ns() - last_look >= TT_LOST_CPU_NS &&
          switched_out(&nivcsw))
        late_wake = true;
      uint32_t gen = go >> GO_GEN_SHIFT;
      if (go & GO_STATIC) {
        run_static(w, go);
        ran = true;
      } else if (join(gen)) {
        run_joined(w, go);
        ran = true;
      }
      ran_gen = gen;
      last_look = last_event = tt__now_ns();
      deadline = last_event < ps.until ? last_event : last_event + T.spin_ns;
      continue;
    }
    /* Spin: check the clock only every few rounds (it costs ~20 ns). */
    for (int i = 0; i < 32; i++) {
      tt__cpu_relax();
      if (tt_atomic_load_relaxed(&w->go) != seen)
        break;
    }
    if (tt_atomic_load_relaxed(&w->go) != seen)
      continue;
    uint64_t now = tt__now_ns();
    if (T.polite && (late_wake || (now - last_look >= TT_LOST_CPU_NS &&
                                   switched_out(&nivcsw)))) {
      /* Lost the CPU while idle, or waited long for it after a wake-up:
       * sleep now, and after chunks for a while. */
      tt_atomic_fetch_add_relaxed(late_wake ? &polite_stats.late_wake
                                            : &polite_stats.gap, 1);
      late_wake = false;
      polite_loss(w, &ps, now);
      deadline = now;
      ran = false;
    }
    last_look = now;
    bool polite = now < ps.until;
    if (!polite && ps.until)
      polite_end(w, &ps);
    if (now - last_event >= TT_POLITE_AFTER_NS)
      sched_yield();
    if (ran) {
      if (region_running(ran_gen) && !polite)
        deadline = now + T.spin_ns;
      else
        ran = false; /* counts down from the last push */
    }
    if (now < deadline && !overcommitted())
      continue;
    if (!polite)
      ps.ns = TT_POLITE_MIN_NS; /* the spin ran out undisturbed */
    if (T.sentinel_mode && !overcommitted() &&
        tt_atomic_load_relaxed(&T.running_gen) == ran_gen) {
      uint32_t none = 0;
      if (tt_atomic_cas_seq_cst(&T.sentinel_id, &none, (uint32_t)w->id)) {
        /* Back when the go word changed, or resigned (overcommitted, or a
         * region passed us by): the deadline has passed, so unless a region
         * came the loop sleeps, or takes the role again once the machine is
         * no longer overcommitted and we were handed the latest region. */
        be_sentinel(w, seen, ran_gen);
        continue;
      }
    }
    /* Sleep.  The CAS is what the holder's exchange is ordered against. */
    uint32_t expect = seen;
    if (!tt_atomic_cas_acq_rel(&w->go, &expect, seen | GO_SLEEP))
      continue; /* a region arrived: handle it */
    tt_atomic_fetch_add_relaxed(polite ? &polite_stats.sleep_polite
                                : now >= deadline ? &polite_stats.sleep_spun
                                                  : &polite_stats.sleep_overcommitted,
                                1);
    tt_atomic_fetch_sub_relaxed(&T.awake, 1);
    while (tt_atomic_load_acquire(&w->go) == (seen | GO_SLEEP)) {
      if (!ps.until) {
        tt__futex_wait(&w->go, seen | GO_SLEEP);
        continue;
      }
      /* Polite: asleep until a region or the period's end, when it looks
       * whether the CPU was free: a timer that fired on time but ran this
       * thread late means another thread still holds it. */
      uint64_t t = tt__now_ns();
      if (t < ps.until)
        tt__futex_wait_ns(&w->go, seen | GO_SLEEP, ps.until - t);
      else if (t - ps.until >= TT_LATE_WAKE_NS && cpus_wanted()) {
        tt_atomic_fetch_add_relaxed(&polite_stats.late_timer, 1);
        polite_loss(w, &ps, t);
      }
      else
        polite_end(w, &ps);
    }
    tt_atomic_fetch_add_relaxed(&T.awake, 1);
    last_look = last_event = tt__now_ns();
    /* Woken by a holder (woke_at set): a wake-up that waited this long for
     * a CPU makes the worker polite once it has run the region. */
    uint64_t woke_at = tt_atomic_exchange_relaxed(&w->woke_at, 0);
    late_wake = woke_at != 0 && last_event > woke_at &&
                last_event - woke_at >= TT_LATE_WAKE_NS && cpus_wanted();
    deadline = last_event + T.spin_ns;
  }
  return NULL;
}

/* ---- lifecycle ----------------------------------------------------------------- */

static void atfork_prepare(void) { pthread_mutex_lock(&lifecycle); }
static void atfork_parent(void) { pthread_mutex_unlock(&lifecycle); }
/* The pinned caller exits (its key's destructor): forget it, so that a
 * shutdown on another thread never gives a mask to a thread that is gone.
 * This takes the lifecycle lock, so a shutdown that holds it and still
 * finds has_pinned_caller set gives the mask to a thread that is alive
 * (blocked, at worst, right here).  A main thread that returns from main()
 * runs no destructors, but then the process ends. */
static pthread_key_t caller_key;
static pthread_once_t caller_key_once = PTHREAD_ONCE_INIT;

static void pinned_caller_exit(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lifecycle);
  if (T.has_pinned_caller && pthread_equal(pthread_self(), T.pinned_caller))
    T.has_pinned_caller = false;
  pthread_mutex_unlock(&lifecycle);
}

static void caller_key_init(void) {
  pthread_key_create(&caller_key, pinned_caller_exit);
}

static void atfork_child(void) {
  /* The child has only the forking thread: forget the parent's workers,
   * and the parent's pinned caller unless that is this thread. */
  if (T.has_pinned_caller && !pthread_equal(pthread_self(), T.pinned_caller))
    T.has_pinned_caller = false;
  tt_atomic_store_relaxed(&T.running, 0);
  tt_atomic_store_relaxed(&T.stopping, 0);
  tt_atomic_store_relaxed(&T.closing, 0);
  tt_atomic_store_relaxed(&T.owner, 0);
  tt_atomic_store_relaxed(&T.sentinel_id, 0);
  T.workers = NULL;
  tt_atomic_store_relaxed(&T.size, 0);
  pthread_mutex_init(&lifecycle, NULL);
}
static void install_atfork(void) {
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Start the team.  Precondition: lifecycle held, team not running. */
static int start_locked(void) {
  uint64_t t0 = tt__now_ns();
  /* The CPUs and the default size come from the process (cpuset.h), not
   * from this thread's mask alone, which OpenMP may have narrowed. */
  tt__cpuset cs;
  tt__cpuset_choose(&cs);
  size_t cpus = cs.size;
  long want = (long)env_double("TEAMS_NUM_THREADS", 0, 1, TT_MAX_PARTICIPANTS);
  if (want > 0) {
    cs.size = (size_t)want;
    snprintf(cs.size_from, sizeof cs.size_from, "TEAMS_NUM_THREADS");
    tt__cpuset_publish(&cs);
  }
  size_t n = want > 0 ? (size_t)want : cs.size;
  static const char *const busy[] = {"serial", "wait", NULL};
  static const char *const idle[] = {"sleep", "sentinel", NULL};
  static const char *const pin[] = {"none", "cores", "numa", NULL};
  tt_atomic_store_relaxed(&T.busy_wait, env_choice("TEAMS_BUSY", busy, 0) == 1);
  T.slots = n;
  T.sentinel_mode = env_choice("TEAMS_IDLE", idle, 0) == 1;
  static const char *const onoff[] = {"on", "off", NULL};
  T.polite = !T.sentinel_mode && env_choice("TEAMS_POLITE", onoff, 0) == 0;
  T.tree_min = (size_t)env_double("TEAMS_TREE_MIN", TT_DEFAULT_TREE_MIN, 2,
                                  TT_MAX_PARTICIPANTS + 1);
  T.tree_k = (size_t)env_double("TEAMS_TREE_K", TT_DEFAULT_TREE_K, 1, 64);
  T.pin = (tt__pin)env_choice("TEAMS_PIN", pin, 0);
  T.spin_ns =
      (uint64_t)(env_double("TEAMS_SPIN_US", TT_DEFAULT_SPIN_US, 0, 1e7) * 1e3);
  T.cpus = cpus;
  T.requested = n;
  T.degraded[0] = 0;

  int *cpus_of = malloc(n * sizeof *cpus_of);
  worker *ws = aligned_alloc(TT_CACHE_PAD, n * sizeof *ws);
  if (!cpus_of || !ws) {
    free(cpus_of);
    free(ws);
    return TT_ENOMEM;
  }
  memset(ws, 0, n * sizeof *ws);
  double topo_ms = 0;
  for (size_t i = 0; i < n; i++)
    cpus_of[i] = -1;
  int trc = tt__topology_init_within(n, T.pin, &cs.cpus, cpus_of, &topo_ms);
  if (trc < 0 && T.pin != TT__PIN_NONE)
    snprintf(T.degraded, sizeof T.degraded,
             "topology unavailable (%s): not pinned", tt_strerror(trc));

  T.workers = ws;
  T.caller_cpu = cpus_of[0];
  T.has_pinned_caller = false;
  if (cpus_of[0] >= 0 && tt__affinity_save(&T.caller_mask) == 0 &&
      tt__pin_self(cpus_of[0]) == 0) {
    T.pinned_caller = pthread_self();
    T.has_pinned_caller = true;
    pthread_once(&caller_key_once, caller_key_init);
    pthread_setspecific(caller_key, &T); /* any non-NULL value */
  }
  tt_atomic_store_relaxed(&T.stopping, 0);
  tt_atomic_store_relaxed(&T.sentinel_id, 0);
  tt_atomic_store_relaxed(&T.r.sync, 0);
  tt_atomic_store_relaxed(&T.running_gen, 0);
  T.gen = 2; /* regions start at generation 3 (next_go) */
  T.resync_gen = 2;
  T.left_base = 0;
  /* Counted awake before they run: a worker that finds nothing to do sleeps
   * after spin_ns, and its fetch_sub must not come before this store (on
   * the 16-CPU machine creating 15 threads took longer than the spin: the
   * early sleepers' decrements were overwritten, awake stayed too high, and
   * every worker saw the team overcommitted and slept after each region). */
  tt_atomic_store_relaxed(&T.awake, n - 1);
  size_t made = 1;
  for (size_t i = 1; i < n; i++) {
    ws[i].id = i;
    ws[i].cpu = cpus_of[i];
    tt_atomic_store_relaxed(&ws[i].go, 0);
    int rc = tt__thread_create(&ws[i].thread, worker_main, &ws[i], &cs.cpus);
    if (rc) {
      snprintf(T.degraded, sizeof T.degraded,
               "created %zu of %zu workers: %s", i - 1, n - 1, strerror(-rc));
      break;
    }
    made++;
  }
  free(cpus_of);
  tt_atomic_store_relaxed(&T.size, made);
  if (made < n)
    tt_atomic_fetch_sub_relaxed(&T.awake, n - made);
  T.start_ms = (double)(tt__now_ns() - t0) / 1e6;
  tt_atomic_store_release(&T.running, 1);

  static bool told; /* TEAMS_DEBUG: once per process, not per restart */
  const char *dbg = getenv("TEAMS_DEBUG");
  if (dbg && *dbg && strcmp(dbg, "0") && !told) {
    told = true;
    if (T.polite)
      atexit(polite_report);
    fprintf(stderr,
            "teams: team of %zu participants (asked %zu), spin %.1f us, idle %s, "
            "polite %s, busy %s, pin %s, tree from %zu (k %zu), topology %.2f ms, "
            "start %.2f ms%s%s\n",
            team_size(), T.requested, (double)T.spin_ns / 1e3,
            idle[T.sentinel_mode], T.polite ? "on" : "off",
            busy[tt_atomic_load_relaxed(&T.busy_wait)],
            pin[T.pin], T.tree_min, T.tree_k, topo_ms, T.start_ms,
            T.degraded[0] ? ", degraded: " : "", T.degraded);
    char list[256];
    tt__cpulist_format(&cs.cpus, list, sizeof list);
    fprintf(stderr, "teams: cpus: %s (%s), size: %zu (%s)\n", list,
            cs.cpus_from, T.requested, cs.size_from);
  }
  return 0;
}

static int ensure_started(void) {
  if (tt_atomic_load_acquire(&T.running))
    return 0;
  pthread_once(&atfork_once, install_atfork);
  pthread_mutex_lock(&lifecycle);
  int rc = 0;
  if (!tt_atomic_load_relaxed(&T.running))
    rc = start_locked();
  pthread_mutex_unlock(&lifecycle);
  return rc;
}

int tt_team_start(void) { return ensure_started(); }

static bool take_cas(void) {
  uintptr_t expect = 0;
  return tt_atomic_cas_acq_rel(&T.owner, &expect, (uintptr_t)&tls_token);
}

/* Take the team unless a shutdown is waiting for it. */
static bool try_take(void) {
  return !tt_atomic_load_relaxed(&T.closing) && take_cas();
}

/* Take the team, waiting (yielding) until it is free; `take` is try_take,
 * or take_cas for the shutdown itself. */
static void take_waiting_with(bool (*take)(void)) {
  unsigned spins = 0;
  while (!take()) {
    if (++spins < 1000)
      tt__cpu_relax();
    else
      sched_yield();
  }
}
static void take_waiting(void) { take_waiting_with(try_take); }

static void release(void) { tt_atomic_store_release(&T.owner, 0); }

static uint32_t next_go(uint32_t flags);

uint32_t tt__team_skip_to_wrap(uint32_t left) {
  if (ensure_started() != 0)
    return 0;
  take_waiting();
  /* Forward only: a generation handed out since the last wrap must not be
   * handed out again before the next one. */
  if (left < GEN_MASK - T.gen)
    T.gen = GEN_MASK - left;
  uint32_t now = GEN_MASK - T.gen;
  release();
  return now;
}

size_t tt__team_awake(void) {
  return tt_atomic_load_acquire(&T.running) ? tt_atomic_load_relaxed(&T.awake)
                                            : 0;
}

int tt__team_make_polite(size_t w, uint64_t ns) {
  if (ensure_started() != 0)
    return TT_EINVAL;
  take_waiting();
  int rc = TT_EINVAL;
  if (w >= 1 && w < team_size()) {
    tt_atomic_store_relaxed(&T.workers[w].polite_until,
                            ns ? tt__now_ns() + ns : 0);
    rc = 0;
  }
  release();
  return rc;
}

int tt_team_shutdown(void) {
  if (tls_depth > 0)
    return TT_EBUSY;
  pthread_mutex_lock(&lifecycle);
  if (!tt_atomic_load_relaxed(&T.running)) {
    pthread_mutex_unlock(&lifecycle);
    return 0;
  }
  tt_atomic_store_relaxed(&T.closing, 1);
  take_waiting_with(take_cas);
  /* Before `stopping`: a resync is a region every worker must run. */
  uint32_t bye = next_go(0);
  tt_atomic_store_release(&T.stopping, 1);
  for (size_t i = 1; i < team_size(); i++) {
    uint32_t old = tt_atomic_exchange_acq_rel(&T.workers[i].go, bye);
    if (old & GO_SLEEP)
      tt__futex_wake(&T.workers[i].go, 1);
  }
  for (size_t i = 1; i < team_size(); i++)
    pthread_join(T.workers[i].thread, NULL);
  free(T.workers);
  T.workers = NULL;
  tt_atomic_store_relaxed(&T.size, 0);
  /* Give the thread pinned as participant 0 its mask back, whichever thread
   * shuts down: it is alive, or its exit cleared has_pinned_caller under
   * the lock we hold (pinned_caller_exit). */
  if (T.has_pinned_caller)
    tt__affinity_restore(T.pinned_caller, &T.caller_mask);
  T.has_pinned_caller = false;
  tt__topology_fini();
  tt_atomic_store_relaxed(&T.running, 0);
  release();
  tt_atomic_store_relaxed(&T.closing, 0);
  pthread_mutex_unlock(&lifecycle);
  return 0;
}

/* ---- regions ------------------------------------------------------------------- */

static void run_serial(void (*f)(void *, size_t), void *ctx, size_t m,
                       tt__mode mode) {
  int saved = tls_self;
  bool saved_parallel = tls_parallel;
  tls_self = 0;
  tls_depth++;
  tls_parallel = false;
  if (mode == TT__MODE_EACH)
    f(ctx, 0);
  else
    for (size_t c = 0; c < m; c++)
      f(ctx, c);
  tls_depth--;
  tls_self = saved;
  tls_parallel = saved_parallel;
}

/* Reset region.sync: `left` to 0, and when open, the generation to gen and
 * `closed` cleared; `active` is kept, for stale joiners may still undo their
 * add.  Precondition: the caller holds the team. */
static void sync_reset(bool open, uint32_t gen) {
  uint64_t old = tt_atomic_load_relaxed(&T.r.sync), fresh;
  do
    fresh = open ? ((uint64_t)gen << SYNC_GEN_SHIFT) | SYNC_ACTIVE(old)
                 : old & ~((uint64_t)0xffff << 16);
  while (!tt_atomic_cas_weak_acq_rel(&T.r.sync, &old, fresh));
}

/* Publishes the region of go word `go` to workers 1..p-1, runs the
 * holder's share and waits for the region's end.  Precondition: the caller
 * holds the team; 2 <= p <= T.size; go from next_go (or the resync's). */
static void run_region(uint32_t go, void (*f)(void *, size_t), void *ctx,
                       size_t m, size_t p, tt__mode mode, bool all) {
  region *r = &T.r;
  uint32_t gen = go >> GO_GEN_SHIFT;
  tt_atomic_store_relaxed(&T.running_gen, gen);
  bool tree = p >= T.tree_min;
  unsigned left_target = 0;
  if (mode == TT__MODE_STATIC) {
    if (tree) {
      tt_atomic_store_relaxed(&T.workers[0].done, 0);
    } else {
      if (T.left_base + (p - 1) > 0xffffu) {
        sync_reset(false, 0); /* `left` would carry into `closed` */
        T.left_base = 0;
      }
    }
  } else {
    tt_atomic_store_relaxed(&r->next, 0);
    sync_reset(true, gen);
    T.left_base = 0;
  }

  /* Flat: polite workers are left out (see the protocol), never of a
   * resync, which every worker must see, nor of a region that asked for all
   * (first touch); a static region's chunks of those the holder runs
   * itself, after its own.  The tree leaves no one out: a leader carries
   * its subtree, and a wait for it is a wait for them all. */
  uint64_t left_out[(TT_MAX_PARTICIPANTS + 63) / 64];
  size_t nleft_out = 0, handed = 0, asleep = 0, kids = 0;
  uint64_t now = 0;
  all = all || gen < 3;
  if (tree) {
    desc d = {f, ctx, m, p, mode};
    kids = hand_on(0, p, go, &d, &asleep);
  } else {
    for (size_t i = 1; i < p; i++) { /* hand_on's steps, no subtree */
      worker *w = &T.workers[i];
      if (!all && tt_atomic_load_relaxed(&w->polite_until) != 0) {
        if (nleft_out++ == 0)
          memset(left_out, 0, sizeof(uint64_t) * ((p + 63) / 64));
        left_out[i / 64] |= (uint64_t)1 << (i % 64);
        continue;
      }
      handed++;
      w->f = f;
      w->ctx = ctx;
      w->m = m;
      w->p = p;
      w->mode = mode;
      w->tree = false;
      w->hi = i + 1;
      w->up = 0;
      uint32_t prev = tt_atomic_exchange_acq_rel(&w->go, go);
      if (!(prev & GO_SLEEP))
        continue;
      if (T.sentinel_mode) {
        tt_atomic_store_seq_cst(&w->wake_req, 1);
        asleep++;
      } else {
        tt_atomic_store_relaxed(&w->woke_at, now ? now : (now = tt__now_ns()));
        tt__futex_wake(&w->go, 1);
      }
    }
  }
  if (asleep) {
    tt_atomic_fetch_add_seq_cst(&T.wake_seq, 1);
    if (tt_atomic_load_seq_cst(&T.sentinel_id) == 0)
      wake_requested(p);
  }
  if (mode == TT__MODE_STATIC && !tree)
    left_target = T.left_base += (unsigned)handed;

  tls_self = 0;
  tls_depth++;
  tls_parallel = true;
  if (mode == TT__MODE_GREEDY) {
    run_greedy(&T.r.next, f, ctx, m, p);
  } else {
    f(ctx, 0);
    if (mode == TT__MODE_STATIC && nleft_out)
      for (size_t i = 1; i < p; i++)
        if (left_out[i / 64] >> (i % 64) & 1)
          f(ctx, i);
  }
  tls_parallel = false;
  tls_depth--;
  tls_self = -1;

  if (mode == TT__MODE_STATIC && tree) {
    WAIT_UNTIL(tt_atomic_load_acquire(&T.workers[0].done) == kids);
  } else if (mode == TT__MODE_STATIC) {
    WAIT_UNTIL(SYNC_LEFT(tt_atomic_load_acquire(&r->sync)) == left_target);
  } else {
    uint64_t w = tt_atomic_fetch_or_acq_rel(&r->sync, SYNC_CLOSED);
    if (SYNC_ACTIVE(w) != 0)
      WAIT_UNTIL(SYNC_ACTIVE(tt_atomic_load_acquire(&r->sync)) == 0);
  }
}

static void noop_chunk(void *ctx, size_t c) {
  (void)ctx;
  (void)c;
}

/* The go word of the next generation (see "A worker notices a region" in
 * the protocol).  Generations 1 and 2 belong to the resyncs, which
 * alternate between them: a worker that no region named since the last
 * resync still holds that resync's word, so the next one must differ from
 * it.  Regions take 3, 4, ... GEN_MASK; 0 is every new worker's initial
 * word.  Precondition: team held, nothing published yet for the region the
 * word is for. */
static uint32_t next_go(uint32_t flags) {
  if (T.gen == GEN_MASK) {
    T.resync_gen = T.resync_gen == 1 ? 2 : 1;
    size_t n = team_size();
    if (n > 1)
      run_region((T.resync_gen << GO_GEN_SHIFT) | GO_STATIC, noop_chunk, NULL,
                 n, n, TT__MODE_STATIC, true);
    T.gen = 2;
  }
  T.gen++;
  return (T.gen << GO_GEN_SHIFT) | flags;
}

/* Precondition: the caller holds the team; 2 <= p <= T.size. */
static void run_parallel(void (*f)(void *, size_t), void *ctx, size_t m,
                         size_t p, tt__mode mode, bool all) {
  run_region(next_go(mode == TT__MODE_STATIC ? GO_STATIC : 0), f, ctx, m, p,
             mode, all);
}

static bool in_openmp_parallel(void) {
  return omp_in_parallel && omp_in_parallel();
}

/* Lending a region to OpenMP.  In a process whose OpenMP runtime keeps its
 * own workers spinning between its regions (libgomp for GOMP_SPINCOUNT,
 * libomp for KMP_BLOCKTIME), the team's workers find their CPUs taken and
 * turn polite, and the holder would run the region alone.  Two sets of
 * idle threads for one set of CPUs is the cost; the cure is one set: while
 * at least half of a flat region's workers are polite, the holder hands the
 * region to the OpenMP runtime instead (GOMP_parallel, with as many threads
 * as OpenMP would use, at most p), whose threads are the ones holding the
 * CPUs and are spinning for work.  Thread t of that region is participant
 * t: a static region's chunk c runs on thread c mod n (n threads), a greedy
 * one claims batches from the region's own counter as the team does, an
 * each region runs f(ctx, t) on threads t < p.  Nothing of the team's
 * protocol runs: the team is held, no go word is written, no worker is
 * woken, and the region's end is OpenMP's barrier.  Only from the process's
 * first thread, which is where an OpenMP program runs its own regions:
 * another thread would get an OpenMP thread pool of its own, one more set
 * of spinners.  Never for a region that asked for all (first touch places
 * pages on the team's CPUs), nor along the tree, nor for a pinned team
 * (its participants are CPUs: victim orders, sub-devices, first touch).
 * Not in a ThreadSanitizer build, which cannot see OpenMP's barriers (the
 * runtime is not instrumented) and would report every lent region's
 * results as a race.  The polite periods decide
 * when it ends: once a worker's period passes, the next region wakes it
 * again, and a worker that finds its CPU free is back. */
typedef struct lent {
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
  _Atomic size_t next;
} lent;

static void lent_part(void *data) {
  lent *L = data;
  size_t t = (size_t)omp_get_thread_num(), n = (size_t)omp_get_num_threads();
  int saved_self = tls_self;
  bool saved_parallel = tls_parallel;
  tls_self = (int)t;
  tls_depth++;
  tls_parallel = true;
  if (L->mode == TT__MODE_GREEDY)
    run_greedy(&L->next, L->f, L->ctx, L->m, n);
  else if (L->mode == TT__MODE_EACH)
    L->f(L->ctx, t);
  else
    for (size_t c = t; c < L->p; c += n)
      L->f(L->ctx, c);
  tls_parallel = saved_parallel;
  tls_depth--;
  tls_self = saved_self;
}

/* Threads for a region lent to OpenMP, or 0 when it is not lent (above).
 * Precondition: the caller holds the team; 2 <= p <= T.size. */
static size_t lend_threads(size_t p, bool all) {
#if defined(__SANITIZE_THREAD__)
  (void)p;
  (void)all;
  return 0;
#endif
  if (!T.polite || all || p >= T.tree_min || T.pin != TT__PIN_NONE ||
      !GOMP_parallel ||
      !omp_get_thread_num || !omp_get_num_threads || !omp_get_max_threads)
    return 0;
  size_t polite = 0;
  for (size_t i = 1; i < p; i++)
    polite += tt_atomic_load_relaxed(&T.workers[i].polite_until) != 0;
  if (2 * polite < p - 1 || polite == 0)
    return 0;
  if ((pid_t)syscall(SYS_gettid) != getpid())
    return 0;
  int n = omp_get_max_threads();
  return n < 2 ? 0 : (size_t)n < p ? (size_t)n : p;
}

static void run_lent(void (*f)(void *, size_t), void *ctx, size_t m,
                     size_t p, tt__mode mode, size_t n) {
  lent L = {f, ctx, m, p, mode, 0};
  tt_atomic_fetch_add_relaxed(&polite_stats.lent, 1);
  /* No region of the team runs: a worker that ran a chunk of the last one
   * must not spin on for this one (region_running). */
  tt_atomic_store_relaxed(&T.running_gen, 0);
  GOMP_parallel(lent_part, &L, (unsigned)n, 0);
}

int tt__team_run(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                 tt__mode mode, int *parallel) {
  if (parallel)
    *parallel = 0;
  bool all = mode == TT__MODE_STATIC_ALL;
  if (all)
    mode = TT__MODE_STATIC;
  if (mode == TT__MODE_EACH)
    m = p;
  if (m == 0)
    return 0;
  if (m < p)
    p = m;
  if (m == 1 || p == 1 || tls_depth > 0 || in_openmp_parallel()) {
    run_serial(f, ctx, m, mode);
    return 0;
  }
  int rc = ensure_started();
  if (rc < 0 && !tt_atomic_load_acquire(&T.running)) {
    run_serial(f, ctx, m, mode);
    return 0;
  }
  if (!try_take()) {
    if (!tt_atomic_load_relaxed(&T.busy_wait)) {
      run_serial(f, ctx, m, mode);
      return 0;
    }
    take_waiting();
  }
  /* Held: shutdown cannot run now, but one may have run before we took it
   * (and a start after it: acquire, so T.size and T.workers are its). */
  if (!tt_atomic_load_acquire(&T.running)) {
    release();
    run_serial(f, ctx, m, mode);
    return 0;
  }
  if (p > team_size())
    p = team_size();
  if (mode == TT__MODE_STATIC && m != p)
    mode = TT__MODE_GREEDY; /* the team is smaller than asked */
  if (mode == TT__MODE_EACH)
    m = p;
  if (p < 2) {
    release();
    run_serial(f, ctx, m, mode);
    return 0;
  }
  size_t lend = lend_threads(p, all);
  if (lend)
    run_lent(f, ctx, m, p, mode, lend);
  else
    run_parallel(f, ctx, m, p, mode, all);
  release();
  if (parallel)
    *parallel = 1;
  return 0;
}

int tt_foreach_chunk(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                     size_t p) {
  if (!f || p == 0)
    return TT_EINVAL;
  return tt__team_run(f, ctx, m, p,
                      m == p || m < p ? TT__MODE_STATIC : TT__MODE_GREEDY, NULL);
}

/* ---- queries ------------------------------------------------------------------- */

int tt_participant(void) { return tls_self; }

size_t tt__team_tree_min(void) {
  return ensure_started() == 0 ? T.tree_min : 0;
}
bool tt__region_parallel(void) { return tls_parallel; }

size_t tt_team_size(void) {
  ensure_started();
  size_t n = team_size();
  return n ? n : 1;
}

int tt__participant_cpu(size_t participant) {
  if (!tt_atomic_load_acquire(&T.running) || participant >= team_size())
    return -1;
  if (participant == 0)
    return T.has_pinned_caller && pthread_equal(pthread_self(), T.pinned_caller)
               ? T.caller_cpu
               : -1;
  return T.workers[participant].cpu;
}

int tt_team_get_info(tt_team_info *info) {
  if (!info)
    return TT_EINVAL;
  int rc = ensure_started();
  if (rc < 0)
    return rc;
  pthread_mutex_lock(&lifecycle);
  info->size = team_size();
  info->requested = T.requested;
  info->spin_us = (double)T.spin_ns / 1e3;
  info->busy_wait = tt_atomic_load_relaxed(&T.busy_wait);
  info->sentinel = T.sentinel_mode;
  info->pinned = (int)T.pin;
  info->start_ms = T.start_ms;
  info->degraded = T.degraded[0] ? T.degraded : NULL;
  pthread_mutex_unlock(&lifecycle);
  return 0;
}
