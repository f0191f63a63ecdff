/* teams: publishing a region on the team and joining it.
 *
 * The rules kept here are docs/protocol.md items 3-13 (the words, the
 * hand-off, the end of a region), 16-18 (generations and the wrap) and 36-41
 * (the tree); each is cited where the code keeps it.  In short: the holder
 * writes each needed worker's descriptor into the worker's own line and
 * exchanges its go word (one RMW that publishes the descriptor and tells
 * whether the worker sleeps, so a futex call is made only then); a static
 * region ends when every worker it named reported, a greedy or each region
 * when the holder closed it and every participant that joined left.
 * Regions of TEAMS_TREE_MIN participants or more are handed on and joined
 * along a tree of branching TEAMS_TREE_K; one hand_on serves both shapes.
 *
 * Measured and rejected: one team-wide futex word for all workers (a wake
 * cannot choose which sleepers it wakes, so a region on 2 of 16 participants
 * would wake everyone asleep).
 *
 * Why the tree starts at 32 participants (TEAMS_TREE_MIN) with branching 2:
 * publishing a flat region is p - 1 exchanges by the holder and a static
 * region's end p - 1 adds to `left`, so the critical path of a fork/join is
 * O(p) line transfers.  The cost model of tools/teams-sim (its fork/join
 * table) counts critical-path line transfers: flat p - 1, the tree with
 * k = 2 at most 2 * ceil(log2 p) (2 log2 p - 2 at powers of two; k = 3 is
 * within one of it up to 512, and checked by teams-sim --check).  They
 * cross below 16, but a tree level also costs its leader's own notice of
 * its go word and a handful of instructions, while the flat holder's
 * exchanges overlap the workers' starts, so the tree starts at 32, where
 * the model gives 8 transfers against 31 (what a 16-CPU machine measured:
 * docs/measurements.md, "The team's tree"). */
#include <string.h>

#include "team-state.h"

/* What a flat hand-on did with the sleepers (NULL along the tree). */
typedef struct sleepers {
  size_t sat_out, woken;
} sleepers;

/* What hand_on copies into a child's line (beside the child's subtree). */
typedef struct desc {
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
} desc;

/* Hands the region described by d with go word `go` to the children of
 * participant `me`, whose subtree is [me, hi): the first participant of each
 * of min(k, hi - me - 1) spans that split me+1..hi-1 as tt__block does (the
 * longer spans first, handed first), each with its span as its subtree
 * (protocol 38).  Flat is k = hi - me - 1: every participant its own span.
 * For each child: its descriptor into its line, then the exchange of its go
 * word, and a wake-up when the old word had SLEEP (protocol 6, 9, 39), which
 * the holder in sentinel mode leaves to the sentinel (wake_req; *asleep
 * counts them; protocol 21).  z (flat regions only, else NULL) counts the
 * workers woken and, unless `wake`, leaves the sleeping ones out.  Returns
 * the number of children handed the region. */
static size_t hand_on(size_t me, size_t hi, uint32_t go, const desc *d,
                      size_t k, bool tree, size_t *asleep, bool wake,
                      sleepers *z) {
  size_t rest = hi - me - 1, kids = k < rest ? k : rest;
  if (kids == 0)
    return 0;
  size_t q = rest / kids, r = rest % kids; /* tt__block's split, hoisted */
  size_t handed = 0;
  for (size_t j = 0; j < kids; j++) {
    size_t lo = me + 1 + j * q + (j < r ? j : r);
    tt__worker *w = &tt__the_team.workers[lo];
    bool sleeps = tt_atomic_load_relaxed(&w->go) & GO_SLEEP;
    /* A wake not made (protocol 10): a sleeping worker of a flat region
     * is left out, its word untouched -- it stays asleep and its next
     * publisher sees SLEEP -- and the holder runs its static chunk. */
    if (!wake && z && sleeps) {
      w->sat_out_gen = go >> GO_GEN_SHIFT;
      z->sat_out++;
      continue;
    }
    handed++;
    w->f = d->f;
    w->ctx = d->ctx;
    w->m = d->m;
    w->p = d->p;
    w->mode = d->mode;
    w->hi = lo + q + (j < r);
    w->up = me;
    w->tree = tree;
    tt_atomic_store_relaxed(&w->late, sleeps);
    uint32_t prev = tt_atomic_exchange_acq_rel(&w->go, go);
    if (!(prev & GO_SLEEP))
      continue;
    if (!sleeps) /* it went to sleep since the load */
      tt_atomic_store_relaxed(&w->late, 1);
    if (asleep && tt__the_team.sentinel_mode) {
      tt_atomic_store_seq_cst(&w->wake_req, 1);
      (*asleep)++;
    } else {
      /* the wake call and, by the worker, its latency: way.h's constants */
      uint64_t t0 = tt__now_ns();
      tt_atomic_store_relaxed(&w->wake_at, t0);
      tt__futex_wake(&w->go, 1);
      tt__costs_wake_call(tt__now_ns() - t0);
      if (z)
        z->woken++;
    }
  }
  return handed;
}

typedef struct wait_done {
  _Atomic uint32_t *done;
  uint32_t kids;
} wait_done;

static bool kids_reported(const void *arg) {
  const wait_done *wd = arg;
  return tt_atomic_load_acquire(wd->done) == wd->kids;
}

/* A static region's chunk on worker w, handed go word `go`: hand the region
 * on to w's subtree first, then the chunk, then (tree) wait for the
 * children's reports, and report: to `up`'s done (tree) or region.sync's
 * `left` (flat).  Nothing of the descriptor is read after the report
 * (protocol 8, 10, 41). */
static void run_static(tt__worker *w, uint32_t go) {
  size_t kids = 0;
  bool tree = w->tree;
  _Atomic uint32_t *up = tree ? &tt__the_team.workers[w->up].done : NULL;
  if (tree && w->hi > w->id + 1) {
    desc d = {w->f, w->ctx, w->m, w->p, w->mode};
    tt_atomic_store_relaxed(&w->done, 0);
    kids = hand_on(w->id, w->hi, go, &d, tt__the_team.tree_k, true, NULL, true,
                   NULL);
  }
  tt__thread *me = tt__me();
  TT__AS_PARTICIPANT(me, w->id, true, w->f(w->ctx, w->id));
  if (!tree) {
    tt_atomic_fetch_add_release(&tt__the_team.r.sync, SYNC_LEFT_ONE);
    return;
  }
  if (kids) {
    wait_done wd = {&w->done, (uint32_t)kids};
    tt__wait_until(kids_reported, &wd);
  }
  tt_atomic_fetch_add_release(up, 1);
}

/* Join a greedy/each region of generation gen; false when it is over (or a
 * newer one was published), in which case nothing of it may be read
 * (protocol 11). */
static bool join(uint32_t gen) {
  uint64_t old = tt_atomic_fetch_add_acq_rel(&tt__the_team.r.sync, SYNC_ACTIVE_ONE);
  if (SYNC_GEN(old) == gen && !(old & SYNC_CLOSED))
    return true;
  tt_atomic_fetch_sub_release(&tt__the_team.r.sync, SYNC_ACTIVE_ONE);
  return false;
}

/* Run chunks of a greedy region from `next` until none is left.  Each
 * participant takes a batch per RMW: a share of what its last claim left,
 * (m - seen) / (2 p), at least one chunk (guided self-scheduling on the one
 * counter).  Batches shrink to single chunks as the range drains, so the
 * last chunks still balance one by one; a claim past m is clamped (protocol
 * 13). */
size_t tt__run_greedy(_Atomic size_t *next, void (*f)(void *, size_t),
                      void *ctx, size_t m, size_t p) {
  size_t seen = 0, div = 2 * p, ran = 0;
  for (;;) {
    size_t k = seen < m ? (m - seen) / div : 0;
    if (k == 0)
      k = 1;
    size_t b = tt_atomic_fetch_add_relaxed(next, k);
    if (b >= m)
      return ran;
    size_t e = b + k < m ? b + k : m;
    for (size_t c = b; c < e; c++)
      f(ctx, c);
    ran += e - b;
    seen = e;
  }
}

/* Precondition: joined the region now in w's line, of go word `go`.  The
 * region is handed on to w's subtree (tree) while the join holds it open:
 * the holder waits for this worker to leave, so no later region rewrites
 * the children's lines meanwhile (protocol 40). */
static void run_joined(tt__worker *w, uint32_t go) {
  if (w->tree && w->hi > w->id + 1) {
    desc d = {w->f, w->ctx, w->m, w->p, w->mode};
    hand_on(w->id, w->hi, go, &d, tt__the_team.tree_k, true, NULL, true, NULL);
  }
  tt__thread *me = tt__me();
  if (w->mode == TT__MODE_EACH)
    TT__AS_PARTICIPANT(me, w->id, true, w->f(w->ctx, w->id));
  else
    TT__AS_PARTICIPANT(me, w->id, true,
                       tt__run_greedy(&tt__the_team.r.next, w->f, w->ctx, w->m, w->p));
  tt_atomic_fetch_sub_release(&tt__the_team.r.sync, SYNC_ACTIVE_ONE);
}

bool tt__worker_region(tt__worker *w, uint32_t *seen) {
  uint32_t go = *seen;
  if (go & GO_STATIC) {
    /* The chunk is this worker's only if its claim came first (protocol
     * 10); otherwise the holder runs it, and nothing of the descriptor is
     * read.  A failed CAS leaves *seen behind the word: the idle loop
     * looks again. */
    if ((go & GO_CLAIM) || !tt_atomic_cas_acq_rel(&w->go, &go, go | GO_CLAIM))
      return false;
    *seen = go | GO_CLAIM;
    run_static(w, go);
    return true;
  }
  if (!join(go >> GO_GEN_SHIFT))
    return false;
  run_joined(w, go);
  return true;
}

/* Reset region.sync: `left` to 0, and when open, the generation to gen and
 * `closed` cleared; `active` is kept, for stale joiners may still undo their
 * add (protocol 10, 12).  Precondition: the caller holds the team. */
static void sync_reset(bool open, uint32_t gen) {
  uint64_t old = tt_atomic_load_relaxed(&tt__the_team.r.sync), fresh;
  do
    fresh = open ? ((uint64_t)gen << SYNC_GEN_SHIFT) | SYNC_ACTIVE(old)
                 : old & ~((uint64_t)0xffff << 16);
  while (!tt_atomic_cas_weak_acq_rel(&tt__the_team.r.sync, &old, fresh));
}

static bool left_reached(const void *arg) {
  return SYNC_LEFT(tt_atomic_load_acquire(&tt__the_team.r.sync)) ==
         *(const unsigned *)arg;
}

static bool none_active(const void *arg) {
  (void)arg;
  return SYNC_ACTIVE(tt_atomic_load_acquire(&tt__the_team.r.sync)) == 0;
}

/* The late participants' chunks of a flat static region (protocol 10):
 * once the holder has run its own chunk, each chunk whose worker has not
 * claimed it is claimed by the holder -- CAS of the worker's go word from
 * the word it was handed to the same with CLAIM -- and run here, one at a
 * time, so a worker that comes meanwhile still takes its own.  The worker
 * claims with the same CAS before it reads its descriptor, so exactly one
 * of the two runs the chunk, and a worker that lost reads nothing; the
 * region then waits only for the reports of the chunks workers claimed.
 * The load first: a chunk already claimed costs no RMW on its line.
 * Returns how many the holder ran; own (may be NULL) counts them with
 * their time. */
static size_t claim_late(tt__thread *me, uint32_t go, void (*f)(void *, size_t),
                         void *ctx, size_t p, tt__own *own) {
  size_t ran = 0;
  for (size_t c = 1; c < p; c++) {
    _Atomic uint32_t *word = &tt__the_team.workers[c].go;
    uint32_t expect = go;
    if (tt_atomic_load_relaxed(word) != go ||
        !tt_atomic_cas_acq_rel(word, &expect, go | GO_CLAIM))
      continue;
    uint64_t t0 = own ? tt__now_ns() : 0;
    TT__AS_PARTICIPANT(me, 0, true, f(ctx, c));
    if (own) {
      own->ns += tt__now_ns() - t0;
      own->chunks++;
    }
    ran++;
  }
  return ran;
}

/* Publishes the region of go word `go` to participants 1..p-1, runs the
 * holder's share and waits for the region's end.  Precondition: the caller
 * holds the team; 2 <= p <= size; go from tt__next_go (or the resync's). */
static void run_region(tt__thread *me, uint32_t go, void (*f)(void *, size_t),
                       void *ctx, size_t m, size_t p, tt__mode mode,
                       bool claims, bool wake, tt__own *own) {
  tt__team *T = &tt__the_team;
  uint32_t gen = go >> GO_GEN_SHIFT;
  tt_atomic_store_relaxed(&T->running_gen, gen);
  tt_atomic_store_relaxed(&T->holder_cpu, tt__cpu_now());
  bool tree = p >= tt_atomic_load_relaxed(&T->tree_min);
  if (mode == TT__MODE_STATIC) {
    if (tree) {
      tt_atomic_store_relaxed(&T->workers[0].done, 0);
    } else if (T->left_base + (p - 1) > 0xffffu) {
      sync_reset(false, 0); /* `left` would carry into `closed` */
      T->left_base = 0;
    }
  } else {
    tt_atomic_store_relaxed(&T->r.next, 0);
    sync_reset(true, gen);
    T->left_base = 0;
  }

  desc d = {f, ctx, m, p, mode};
  size_t asleep = 0;
  sleepers z = {0, 0};
  size_t kids = hand_on(0, p, go, &d, tree ? T->tree_k : p - 1, tree, &asleep,
                        wake || !claims, tree ? NULL : &z);
  if (asleep) { /* protocol 21 */
    tt_atomic_fetch_add_seq_cst(&T->wake_seq, 1);
    if (tt_atomic_load_seq_cst(&T->sentinel_id) == 0)
      tt__wake_requested(p);
  }

  uint64_t t0 = own ? tt__now_ns() : 0;
  size_t chunks = 1;
  if (mode == TT__MODE_GREEDY)
    TT__AS_PARTICIPANT(me, 0, true,
                       chunks = tt__run_greedy(&T->r.next, f, ctx, m, p));
  else
    TT__AS_PARTICIPANT(me, 0, true, f(ctx, 0));
  /* The chunks of the workers that sat the region out: the holder's. */
  if (z.sat_out && mode == TT__MODE_STATIC)
    for (size_t c = 1; c < p; c++)
      if (T->workers[c].sat_out_gen == gen) {
        TT__AS_PARTICIPANT(me, 0, true, f(ctx, c));
        chunks++;
      }
  if (own) {
    own->ns = tt__now_ns() - t0;
    own->chunks = chunks;
    own->woken = z.woken;
  }

  if (mode == TT__MODE_STATIC && tree) {
    wait_done wd = {&T->workers[0].done, (uint32_t)kids};
    tt__wait_until(kids_reported, &wd);
  } else if (mode == TT__MODE_STATIC) {
    unsigned left_target = T->left_base += (unsigned)kids;
    if (claims && !left_reached(&left_target))
      left_target = T->left_base -= (unsigned)claim_late(me, go, d.f, d.ctx, p, own);
    tt__wait_until(left_reached, &left_target);
  } else {
    uint64_t w = tt_atomic_fetch_or_acq_rel(&T->r.sync, SYNC_CLOSED);
    if (SYNC_ACTIVE(w) != 0)
      tt__wait_until(none_active, NULL);
  }
  /* A worker woken that has not run yet (its wake_at still set) by the end
   * of a flat region may be waiting on this CPU's run queue: the scheduler
   * puts a woken thread beside its waker (idle.c, "Yielding"), where it
   * runs only when the holder lets it, and a caller that never blocks
   * never does (on the 2-core guest for milliseconds, every region handed
   * to it run by the holder).  One yield, while the team is still held,
   * lets it run, see its holder's CPU and move off it. */
  if (!tree)
    for (size_t c = 1; c < p; c++)
      if (tt_atomic_load_relaxed(&T->workers[c].wake_at)) {
        tt__yield();
        break;
      }
}

static void noop_chunk(void *ctx, size_t c) {
  (void)ctx;
  (void)c;
}

/* The go word of the next generation (protocol 16-18).  Generations 1 and 2
 * belong to the resyncs, which alternate between them: a worker that no
 * region named since the last resync still holds that resync's word, so
 * the next one must differ from it.  Regions take 3, 4, ... GEN_MASK; 0 is
 * every new worker's initial word.  Before the generation wraps, the resync:
 * an empty static region on every worker, which each must see to run its
 * chunk.  Precondition: team held, nothing published yet for the region the
 * word is for. */
uint32_t tt__next_go(tt__thread *me, uint32_t flags) {
  tt__team *T = &tt__the_team;
  if (T->gen == GEN_MASK) {
    T->resync_gen = T->resync_gen == 1 ? 2 : 1;
    size_t n = tt__team_size();
    if (n > 1)
      run_region(me, (T->resync_gen << GO_GEN_SHIFT) | GO_STATIC, noop_chunk,
                 NULL, n, n, TT__MODE_STATIC, false, true, NULL);
    T->gen = 2;
  }
  T->gen++;
  return (T->gen << GO_GEN_SHIFT) | flags;
}

void tt__run_parallel(tt__thread *me, void (*f)(void *, size_t), void *ctx,
                      size_t m, size_t p, tt__mode mode, bool wake,
                      tt__own *own) {
  /* A first-touch region keeps every chunk on its participant: no claims,
   * and every sleeper woken (protocol 10). */
  bool claims = mode != TT__MODE_STATIC_PLACED;
  if (!claims)
    mode = TT__MODE_STATIC;
  run_region(me, tt__next_go(me, mode == TT__MODE_STATIC ? GO_STATIC : 0), f,
             ctx, m, p, mode, claims, wake, own);
}
