/* teams: idle workers -- spin, then sleep -- and the sentinel.
 *
 * The idle rule (docs/protocol.md item 19; ThreadTeams.jl PR #68): a worker
 * spins on its own go word until a deadline spin_ns after its last chunk or
 * wake-up, then sleeps (protocol 9).  While the region it ran a chunk of
 * still runs it keeps pushing the deadline out, so a worker that is part of
 * back-to-back loops stays ready for the next one; a worker no running
 * region uses sleeps after spin_ns however busy the team is.  This rule
 * decides only when a worker sleeps; whether a region uses the team's
 * workers at all is way.c's choice.
 *
 * Why 100 us (TEAMS_SPIN_US).  Long enough that a worker of back-to-back
 * loops with short serial gaps between them never sleeps, short enough that
 * an unused worker costs well under 1% of a core.  A gap longer than the
 * spin costs one wake-up whatever the spin, while the idle CPU over the
 * gap grows with the spin: a longer spin only moves the gap length at
 * which the wake-up is paid; TEAMS_IDLE=sentinel is the answer when that
 * matters.  The measurements behind this file's rules (teams-bench's wake
 * sweep, the overcommitted, yielding and sentinel cases):
 * docs/measurements.md, "Idle workers".
 *
 * Overcommitted (more of the team's threads awake than CPUs, the caller
 * counted as one, and so are the CPUs that the process's other threads --
 * OpenMP's, spinning between its regions -- kept busy at the lending
 * thread's last look, lend.c): a spinner would take a CPU that a
 * participant with work, or OpenMP's next region, needs, so an idle worker
 * sleeps at once and the holder's wait yields at once.  The count is
 * structural, as Go's cap on spinning Ms against idle Ps is
 * (runtime/proc.go, wakep): no constant.
 *
 * Yielding.  An idle worker does not yield while it spins.  A yield hands
 * the CPU to whichever thread wants it, and next to another process's
 * busy thread that is a time slice for every region.  But a worker does
 * not spin on the CPU its holder forked the running region from
 * (team.holder_cpu, where the holder ran at its last fork; while the team
 * is held): two threads cannot run on one CPU, so the holder, which still
 * has to see the chunks done and close the region, is then waiting for
 * that CPU, and an idle worker's spin keeps it waiting until the next time
 * slice (woken next to another process's busy thread, or on a KVM guest
 * whose other vCPU is halted, the scheduler puts the worker beside its
 * waker: up to half the wakes of the 2-core guests, docs/measurements.md;
 * tests/test-idle.c).  Such a worker moves itself off the holder's CPU
 * (tt__move_off: its mask less that CPU, then its mask again) and spins
 * on; where its mask has no other CPU it sleeps (a yield, under EEVDF,
 * runs the holder only when the holder is eligible), and the next region's
 * wake-up lets the scheduler place it again -- which, on those guests,
 * often puts it beside its waker again.  Not in sentinel mode, whose
 * worker spins by request and yields after yield_after_ns.  The check is a
 * load of the thread's CPU (glibc keeps it in the rseq area) at each clock
 * look.  Where the spin hurts
 * this process's own threads (an OpenMP runtime's, between the team's
 * regions), the region's measured cost, gap included, says so, and the
 * way's choice (way.c) moves the region off the team.  Waits that serve
 * the team do yield, once they have lasted yield_after_ns: the holder's
 * (and a tree leader's) wait for its participants, whose CPU a yield can
 * only give to them when they share it, and the sentinel's endless spin.
 * The threshold is measured at start: TT__OVERHEAD_DIV times the cost of a
 * sched_yield that finds no one to switch to (the least of 8), so that
 * yielding costs a wait at most 1/TT__OVERHEAD_DIV of its length when it
 * helps no one, held within 1 us - 1 ms (tt__yield_threshold_ns).
 *
 * Sentinel mode (TEAMS_IDLE=sentinel, HPX PR #8036; protocol 20, 21): a
 * worker whose deadline passed first tries CAS(team.sentinel_id: 0 -> its
 * id).  The winner does not sleep: it spins on its own go word with no
 * deadline, so the next region that needs it starts without a wake-up, and
 * serves the wake-ups the holder leaves to it.  Not on an overcommitted
 * machine: a worker then does not take the role, and a sentinel that finds
 * the machine overcommitted resigns and sleeps, since it would take a CPU
 * that a participant or the caller needs.  And the role goes only to a
 * worker that the latest region was handed to (its last go word's
 * generation is team.running_gen), and a sentinel that a later region
 * passed by resigns: a worker the loops do not use never spins for them
 * (tests/test-team.c, sentinel_steps_aside_when_overcommitted).  To
 * the protocol both are a worker that does not try for the role and a
 * resignation at any moment, which the model makes nondeterministically. */
#include <stdio.h>

#include "team-state.h"

/* What the idle rule did, for TEAMS_DEBUG's report at exit: why workers
 * slept.  Relaxed counters, bumped only before a sleep. */
_Atomic uint64_t tt__sleeps_spun, tt__sleeps_overcommitted, tt__sleeps_beside_holder,
    tt__moves_off_holder;
/* Whether this worker runs on the CPU the holder forked its last region
 * from while the team is held (see "Yielding"). */
static bool beside_holder(int c) {
  if (tt_atomic_load_relaxed(&tt__the_team.owner) == 0)
    return false;
  return c >= 0 && c == tt_atomic_load_relaxed(&tt__the_team.holder_cpu);
}

bool tt__overcommitted(void) {
  return (size_t)tt_atomic_load_relaxed(&tt__the_team.awake) + 1 +
             tt_atomic_load_relaxed(&tt__the_team.others_busy) >
         tt__the_team.cpus;
}

uint64_t tt__yield_threshold_ns(void) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 8; i++) {
    uint64_t t0 = tt__now_ns();
    tt__yield();
    uint64_t dt = tt__now_ns() - t0;
    best = dt < best ? dt : best;
  }
  uint64_t ns = best * TT__OVERHEAD_DIV;
  return ns < 1000 ? 1000 : ns > 1000000 ? 1000000 : ns;
}

/* True while the region of generation gen has not ended. */
static bool region_running(uint32_t gen) {
  return tt_atomic_load_relaxed(&tt__the_team.owner) != 0 &&
         tt_atomic_load_relaxed(&tt__the_team.running_gen) == gen;
}

/* Wake every worker whose wake-up was left to the sentinel (protocol 21).
 * Called by the sentinel, and by the holder when there is no sentinel. */
void tt__wake_requested(size_t upto) {
  for (size_t i = 1; i < upto; i++)
    if (tt_atomic_load_seq_cst(&tt__the_team.workers[i].wake_req) &&
        tt_atomic_exchange_seq_cst(&tt__the_team.workers[i].wake_req, 0))
      tt__futex_wake(&tt__the_team.workers[i].go, 1);
}

/* Sentinel mode: spin, without a deadline, until this worker's go word
 * changes from seen, the machine is overcommitted, or a region other than
 * ran_gen (the last one handed to this worker) starts without it; serve the
 * wake-ups the holder leaves meanwhile.  Precondition: this worker holds
 * team.sentinel_id. */
static void be_sentinel(tt__worker *w, uint32_t seen, uint32_t ran_gen) {
  tt__team *T = &tt__the_team;
  /* A holder that already read our id from team.sentinel_id may have bumped
   * wake_seq before this load: then its wake_req stores precede the load,
   * and the scan right after it finds them (all seq_cst).  Without that scan
   * such a wake-up waited for our resignation, and a static region that
   * needed the sleeper waited for ever (found by the model check,
   * MUT_SENTINEL_NOENTRYSCAN). */
  uint32_t seq = tt_atomic_load_seq_cst(&T->wake_seq);
  tt__wake_requested(T->slots);
  uint64_t since = tt__now_ns();
  for (unsigned k = 0; tt_atomic_load_acquire(&w->go) == seen; k++) {
    if (k % 64 == 0 && (tt__overcommitted() ||
                        tt_atomic_load_relaxed(&T->running_gen) != ran_gen))
      break;
    if (k % 64 == 0 && tt__now_ns() - since >= T->yield_after_ns)
      tt__yield();
    else
      tt__cpu_relax();
    uint32_t now = tt_atomic_load_acquire(&T->wake_seq);
    if (now != seq) {
      seq = now;
      tt__wake_requested(T->slots);
    }
  }
  tt_atomic_store_seq_cst(&T->sentinel_id, 0);
  tt__wake_requested(T->slots); /* what was left to us before we resigned */
}

void *tt__worker_main(void *arg) {
  tt__worker *w = arg;
  tt__team *T = &tt__the_team;
  if (w->cpu >= 0)
    tt__pin_self(w->cpu);
  char name[16]; /* shows in /proc/self/task/N/comm, top -H, gdb */
  snprintf(name, sizeof name, "teams-w%zu", w->id);
  pthread_setname_np(pthread_self(), name);
  /* Not a load: a region may have been published before this thread ran,
   * and it must be seen as new.  0 is the value start gave the word. */
  uint32_t seen = 0;
  uint64_t last_event = tt__now_ns(); /* last chunk or wake-up */
  uint64_t deadline = last_event + tt_atomic_load_relaxed(&T->linger_ns);
  uint32_t ran_gen = 0;
  bool ran = false; /* ran a chunk of region ran_gen, which may still run */

  for (;;) {
    uint32_t go = tt_atomic_load_acquire(&w->go);
    if (go != seen) { /* protocol 7 */
      seen = go;
      if (tt_atomic_load_acquire(&T->stopping)) /* protocol 23 */
        break;
      if (tt__worker_region(w, &seen))
        ran = true;
      ran_gen = go >> GO_GEN_SHIFT;
      last_event = tt__now_ns();
      deadline = last_event + tt_atomic_load_relaxed(&T->linger_ns);
      continue;
    }
    /* Spin: check the clock only every few rounds (a clock read costs more
     * than a look at the go word: docs/measurements.md, "Idle workers"). */
    for (int i = 0; i < 32; i++) {
      tt__cpu_relax();
      if (tt_atomic_load_relaxed(&w->go) != seen)
        break;
    }
    if (tt_atomic_load_relaxed(&w->go) != seen)
      continue;
    uint64_t now = tt__now_ns();
    if (ran) {
      if (region_running(ran_gen))
        deadline = now + tt_atomic_load_relaxed(&T->linger_ns);
      else
        ran = false; /* counts down from the last push */
    }
    bool over = tt__overcommitted();
    bool beside = !over && !T->sentinel_mode && beside_holder(tt__cpu_now());
    if (beside && tt__move_off(tt_atomic_load_relaxed(&T->holder_cpu))) {
      tt_atomic_fetch_add_relaxed(&tt__moves_off_holder, 1);
      beside = false;
    }
    if (now < deadline && !over && !beside)
      continue;
    if (T->sentinel_mode && !over &&
        tt_atomic_load_relaxed(&T->running_gen) == ran_gen) {
      uint32_t none = 0;
      if (tt_atomic_cas_seq_cst(&T->sentinel_id, &none, (uint32_t)w->id)) {
        /* Back when the go word changed, or resigned (overcommitted, or a
         * region passed us by): the deadline has passed, so unless a region
         * came the loop sleeps, or takes the role again once the machine is
         * no longer overcommitted and we were handed the latest region. */
        be_sentinel(w, seen, ran_gen);
        continue;
      }
    }
    /* Sleep.  The CAS is what the holder's exchange is ordered against
     * (protocol 9). */
    uint32_t expect = seen;
    if (!tt_atomic_cas_acq_rel(&w->go, &expect, seen | GO_SLEEP))
      continue; /* a region arrived: handle it */
    tt_atomic_fetch_add_relaxed(over     ? &tt__sleeps_overcommitted
                                : beside ? &tt__sleeps_beside_holder
                                         : &tt__sleeps_spun,
                                1);
    tt_atomic_fetch_sub_relaxed(&T->awake, 1);
    while (tt_atomic_load_acquire(&w->go) == (seen | GO_SLEEP))
      tt__futex_wait(&w->go, seen | GO_SLEEP);
    tt_atomic_fetch_add_relaxed(&T->awake, 1);
    last_event = tt__now_ns();
    /* woken by a holder's call: a sample of the wake's latency (way.h) */
    uint64_t at = tt_atomic_exchange_relaxed(&w->wake_at, 0);
    if (at && last_event > at && last_event - at < 50000000u)
      tt__costs_wake_lat(last_event - at);
    deadline = last_event + tt_atomic_load_relaxed(&T->linger_ns);
  }
  return NULL;
}
