/* teams: a Promela model of the region protocol of launcher/team.c, for spin
 * (checked by tests/model-check.sh; change it together with team.c).
 *
 * What is modelled, as team.c implements it (names are team.c's):
 *   - host threads that take team.owner by CAS (try_take) and, when that
 *     fails, run serially (the busy rule) or, with -DBUSY_WAIT, wait for the
 *     team (take_waiting); the check of team.running once held; the release;
 *   - run_parallel: next_go (the next generation; before the generation
 *     wraps, the resync: an empty static region on every worker, whose
 *     generation alternates between 1 and 2); a static region's target
 *     for the free-running
 *     `left` (with the sync_reset(false) that keeps it from carrying into
 *     `closed`); a greedy/each region's reset of region.next and
 *     sync_reset(true) that keeps `active`; for each needed worker the
 *     descriptor written into its line, then the exchange of its go word and
 *     the futex wake when the old word had SLEEP; the holder's own share
 *     (chunk 0, or run_greedy); the wait for `left` (static) or the close
 *     (fetch_or closed) and the wait for active == 0 (greedy, each);
 *   - run_greedy's guided claims: a batch of (m - seen) / (2p) chunks, at
 *     least one, per fetch_add of region.next, clamped at m;
 *   - worker_main: the go-word check, the stopping check, run_static +
 *     fetch_add(left), join (fetch_add active, kept only for our generation
 *     and not closed, else undone), run_joined + leave; the idle rule, whose
 *     deadline is a nondeterministic choice (spinning is a blocked guard on
 *     the go word), the CAS seen -> seen|SLEEP and the futex_wait loop;
 *   - the futex: futex_wait queues the worker only while the word still has
 *     the value (atomically), futex_wake dequeues it, and up to SPURIOUS
 *     returns without a wake (spurious, EINTR from a signal, the end of a
 *     polite worker's timed wait) per run;
 *   - tt_team_shutdown, concurrent with the host threads: take_waiting,
 *     next_go (with its resync) before stopping, then stopping, the go word
 *     for every worker, its exchange (+ wake), join,
 *     running = 0, release;
 *   - with -DSENTINEL_MODE (team.sentinel_mode, TEAMS_IDLE=sentinel): a
 *     worker whose deadline passed first tries CAS(team.sentinel_id: 0 ->
 *     its id), or does not try (overcommitted, or not handed the
 *     latest region); be_sentinel (load wake_seq,
 *     spin on the go word, scan the wake_req flags when wake_seq moved,
 *     resign with a store of 0 when the go word changed or, up to RESIGNS
 *     times per run, at any moment (overcommitted, or a region that passed
 *     it by: team.running_gen), scan once more); the
 *     holder's delegation (wake_req = 1 for each sleeper its exchange found,
 *     fetch_add(wake_seq), load team.sentinel_id, and when it is 0,
 *     wake_requested itself);
 *   - the tree (team.c's "The tree"), for regions of TREE_MIN participants
 *     or more (TEAMS_TREE_MIN; by default never here), branching TREE_K:
 *     hand_on, by the holder and by every leader (the split of a subtree
 *     into runs, the child's descriptor with its subtree and parent, the
 *     exchange and the wake-up; only the holder delegates to the
 *     sentinel); a static leader's reset of its `done`, its hand-on, its
 *     chunk, the wait for its children and the report to its parent's
 *     `done`; a greedy/each leader's hand-on after its join, before its
 *     run and its leave; the holder's wait for its own children's reports.
 * Abstracted: the clock and everything that only decides *when* a worker
 * tries to sleep (spin_ns, the deadline push while team.running_gen names
 * the region it ran, `awake` and overcommitted(), sched_yield): here a
 * worker may try at any time.  The chunk function: one step that counts the
 * chunk.  Memory orders: spin explores interleavings of sequentially
 * consistent steps; every atomic instruction of team.c is one step here,
 * and the holder's plain stores of a worker's descriptor are one step, which
 * the ghost `inuse[w]` and the generation check at every read of a
 * descriptor show never overlaps a reader.  Which release/acquire pairs make
 * the descriptor visible is not checked here (the ThreadSanitizer runs of
 * tests/test-stress.c and test-faults.c cover that).
 *
 * Properties (pan in safety mode):
 *   - no invalid end state: every process ends (workers exit at shutdown) or
 *     rests in a valid idle state (end* labels).  A holder waiting for a
 *     worker that sleeps on is a deadlock, so this also shows that no needed
 *     worker is left asleep (no lost wake-up);
 *   - every chunk of every region runs exactly once (cnt[]), checked at each
 *     run and when the holder's wait ends;
 *   - a participant reads only the descriptor of the generation it was
 *     handed (static) or joined (greedy/each), and the holder never rewrites
 *     a worker's descriptor while that worker may read it;
 *   - when the holder's wait ends every participant is out; `active` never
 *     underflows, `left` never carries into `closed`; at the end the team is
 *     released (owner == 0), shut down, and no sentinel is left.
 *
 * Mutations (-DMUT_*), each of which must make the check fail (see
 * tests/model-check.sh): MUT_LOAD_SLEEP (the worker loads its go word and
 * stores SLEEP instead of the CAS), MUT_STORE_GO (the holder loads the go
 * word, then stores it, instead of the exchange), MUT_RESET_ACTIVE (the sync
 * reset clears `active`), MUT_JOIN_NOCHECK (a join is kept even on a closed
 * or newer region), MUT_NO_CLOSE (the holder loads `active` instead of
 * closing the region with fetch_or), MUT_NO_FUTEX_RECHECK (futex_wait sleeps
 * without comparing the word), MUT_NO_LEFT_RESET (no sync_reset(false) before
 * `left` would overflow), MUT_KEEP_OWNER (a host thread that finds the team
 * shut down forgets to release it), MUT_SENTINEL_NOPOLL (the sentinel does
 * not watch wake_seq; it scans only when it resigns),
 * MUT_SENTINEL_NOENTRYSCAN (a new sentinel does not scan after its first
 * read of wake_seq: a holder that saw its id and bumped wake_seq just before
 * that read leaves a wake-up nobody serves until the sentinel resigns, the
 * lost wake-up of team.c before the scan was added).  MUT_SENTINEL_NOSCAN
 * (no scan after resigning) is caught only while nothing else scans: once a
 * new sentinel scans when it takes the role, a wake-up left by a resigning
 * sentinel is late, not lost (a worker that idles takes the role).
 * The tree's mutations, caught in tree-2w-3r-k1's configuration:
 * MUT_TREE_NO_WAKE (a leader exchanges a member's go word but leaves it
 * asleep), MUT_TREE_WRONG_COUNTER (a member reports to the holder's `done`,
 * not its leader's), MUT_TREE_NO_CHILD_WAIT (a leader reports before its
 * members did), MUT_TREE_LATE_RESET (a leader resets its `done` after
 * handing on: a quick member's report is lost), MUT_TREE_STALE_FORWARD (a
 * leader whose join was stale hands on anyway, reading a descriptor that is
 * not its own any more).  A leader that runs its chunk before handing on is
 * slower, not wrong: no mutant.
 *
 * Polite mode (-DLEAVE_OUT): the holder may leave any worker out of a
 * region (team.c decides by the worker's polite_until, which the worker
 * sets and clears itself, and which the model abstracts into a
 * nondeterministic choice), never out of a resync; it runs
 * a static region's chunk of a left-out worker itself after its own, and
 * counts only the workers it handed the region to in `left`'s target.
 * Mutations: MUT_LEFT_OUT_COUNTED (the target counts a left-out worker: the
 * holder waits forever), MUT_LEFT_OUT_NOCHUNK (the left-out worker's static
 * chunk never runs), MUT_RESYNC_LEAVES_OUT (a resync leaves a worker out,
 * which may then be handed the word it still holds and miss a region).
 *
 * Generations wrap modulo GENMOD (2^30 in team.c): regions take 3 ..
 * GENMOD - 1, resyncs 1 and 2 in turn.  The default GENMOD never wraps in
 * these bounded runs; tests/model-check.sh wraps with GENMOD = 4 and 5.
 * MUT_NO_RESYNC (generations restart at 1 with no resync: a worker that
 * looked at no go word for a whole round may be handed the word it still
 * holds) and MUT_SAME_RESYNC (every resync takes generation 1: a worker that
 * only the last resync named holds that word) must be caught.
 */

#ifndef NW
#define NW 2 /* workers 1..NW; participant 0 is the holder */
#endif
#ifndef NH
#define NH 2 /* host threads competing for the team */
#endif
#ifndef NREG
#define NREG 2 /* regions launched by each host thread */
#endif
#ifndef M
#define M 3 /* chunks of a greedy region */
#endif
#ifndef SPURIOUS
#define SPURIOUS 1 /* futex_wait returns without a wake, per run */
#endif
#ifndef PMIN
#define PMIN 2 /* smallest p a region asks for */
#endif
#ifndef MODES
#define MODES 7 /* kinds of region launched: 1 static, 2 greedy, 4 each */
#endif
#ifndef LEFT_MAX
#define LEFT_MAX 3 /* largest value of region.sync's `left` (0xffff in team.c) */
#endif
/* Generations: team.gen counts 1, 2, ... skipping 0, modulo GENMOD (2^30 in
 * team.c); by default the bounded runs never wrap. */
#ifndef GENMOD
#define GENMOD 64
#endif

/* The tree (team.c's "The tree"): regions of TREE_MIN participants or more
 * are handed on along a tree of branching TREE_K (TEAMS_TREE_MIN and
 * TEAMS_TREE_K); by default never. */
#ifndef TREE_MIN
#define TREE_MIN 255
#endif
#ifndef TREE_K
#define TREE_K 2
#endif
#ifdef SENTINEL_MODE
#define DELEG 1 /* the holder leaves wake-ups to the sentinel */
#else
#define DELEG 0
#endif

#define NP (NW + 1)
#if M > NW + 1
#define MAXCH M
#else
#define MAXCH (NW + 1)
#endif

#define ST_STATIC 0
#define ST_GREEDY 1
#define ST_EACH 2

#define GO_SLEEP 1
#define GO_STATIC 2
#define GO_GEN(w) ((w) / 4)

/* ---- team.c's words ---- */
byte owner;        /* team.owner: 0, a host thread 1..NH, or NH+1 (shutdown) */
byte tgen = 2;     /* team.gen (holder-only): regions start at 3 */
byte resync_gen = 2; /* team.resync_gen (holder-only) */
byte left_base;    /* team.left_base (holder-only) */
bool running = 1;  /* team.running */
bool stopping;     /* team.stopping */
byte r_next;       /* region.next */
/* region.sync = [gen | closed | left | active] */
byte s_gen;
bool s_closed;
byte s_left;
byte s_active;
/* each worker's line: go = gen*4 | STATIC<<1 | SLEEP, and the descriptor of
 * the last region handed to it (f and ctx are the chunk counting below) */
byte go[NP];
byte d_m[NP];
byte d_p[NP];
byte d_mode[NP];
/* the tree's part of the descriptor: subtree [w, d_hi[w]), the participant
 * to report to, tree or flat; and each participant's `done` (0: the
 * holder's, workers[0].done in team.c) */
byte d_hi[NP];
byte d_up[NP];
bool d_tree[NP];
byte done_cnt[NP];
/* sentinel mode: team.sentinel_id, worker.wake_req, and team.wake_seq as
 * the sentinel sees it: `poked` is 1 when wake_seq moved since the sentinel
 * last loaded it.  Only the sentinel loads wake_seq and there is at most one
 * at a time, so "seq = load(wake_seq)" is "poked = 0" and
 * "load(wake_seq) != seq" is "poked": the same behaviours, with one bit
 * instead of two counters. */
byte sentinel_id;
bool poked;
bool wake_req[NP];
/* ghost: resignations without a go word change (overcommitted()), bounded
 * so that the search stays finite */
byte resigns;
#ifndef RESIGNS
#define RESIGNS 1
#endif

/* ---- the futex and the ghosts ---- */
bool queued[NP];   /* worker queued in futex_wait on its go word */
byte spur = SPURIOUS;
byte d_gen[NP];    /* generation of the descriptor in worker w's line */
bool inuse[NP];    /* worker w between reading its descriptor and leaving */
byte cnt[MAXCH];   /* runs of chunk c of the current region */
byte exited;       /* workers that returned from worker_main */
byte done;         /* host threads and shutdown that finished */

#define CHUNK(c)                                                               \
  cnt[c]++;                                                                    \
  assert(cnt[c] == 1)

inline futex_wake(w) {
  queued[w] = 0
}

/* wake_requested: the load and the exchange of wake_req[j] are one step (the
 * exchange decides), and so is the futex_wake after a 1: a later wake cannot
 * matter, for the woken worker's go word changed before wake_req was set and
 * futex_wait re-checks it. */
inline wake_requested(upto) {
  j = 1;
  do
  :: j < upto ->
    atomic {
      if
      :: wake_req[j] -> wake_req[j] = 0; futex_wake(j)
      :: else
      fi;
      j++
    }
  :: else -> j = 0; break
  od
}

/* hand_on, by participant `me` (0: the holder) whose subtree is [me, hi), of
 * the region of generation g, go word gw: flat (tr 0, me 0), every
 * participant 1..hi-1; tree, the first participant of each of min(TREE_K,
 * hi - me - 1) runs that split me+1..hi-1 as tt__block does, with its run as
 * its subtree.  For each: the descriptor, the exchange of its go word, and
 * the wake-up when the old word had SLEEP (deleg: left to the sentinel).
 * Leaves the number of children in kids. */
inline hand_on(h_me, h_hi, h_gw, h_m, h_p, h_mode, h_tr, h_deleg, h_lout) {
  atomic {
    assert(h_me == 0 || d_gen[h_me] == g); /* reads its own descriptor */
    rest = h_hi - h_me - 1;
    kids = (h_tr -> TREE_K : rest);
    if
    :: kids > rest -> kids = rest
    :: else
    fi;
    i = 0
  }
  do
#ifdef LEAVE_OUT
  /* polite mode, flat only: the holder may leave out any worker (team.c
   * decides by its polite period); never in a resync (h_lout 0), which
   * every worker must see */
  :: i < kids && !h_tr && h_lout -> atomic { lout = lout | (1 << (h_me + 1 + i)); i++ }
#endif
  :: i < kids ->
    atomic { /* the child's run, and its descriptor: plain stores into its line */
      if
      :: h_tr ->
        lo = i * (rest / kids) + (i < rest % kids -> i : rest % kids);
        hi2 = lo + rest / kids + (i < rest % kids -> 1 : 0) + h_me + 1;
        lo = lo + h_me + 1
      :: else -> lo = h_me + 1 + i; hi2 = lo + 1
      fi;
      assert(!inuse[lo]);
      d_gen[lo] = g;
      d_m[lo] = h_m;
      d_p[lo] = h_p;
      d_mode[lo] = h_mode;
      d_hi[lo] = hi2;
      d_up[lo] = h_me;
      d_tree[lo] = h_tr;
      hi2 = 0
    }
#ifdef MUT_STORE_GO
    prev = go[lo];
    go[lo] = h_gw;
#else
    atomic {
      prev = go[lo];
      go[lo] = h_gw
    }
#endif
    if
    :: (prev & GO_SLEEP) && h_deleg -> wake_req[lo] = 1; asleep = 1
#ifdef MUT_TREE_NO_WAKE
    :: (prev & GO_SLEEP) && !h_deleg && h_me != 0 /* leaves its member asleep */
    :: (prev & GO_SLEEP) && !h_deleg && h_me == 0 -> futex_wake(lo)
#else
    :: (prev & GO_SLEEP) && !h_deleg -> futex_wake(lo)
#endif
    :: else
    fi;
    atomic { prev = 0; lo = 0; i++ }
  :: else -> atomic { i = 0; rest = 0; break }
  od
}

/* run_greedy by participant `me` (0: the holder) of a region of m chunks on
 * p participants: one step per claim, which runs the claimed batch. */
inline run_greedy(me, m, p) {
  seen = 0;
  do
  :: atomic {
       k = (seen < m -> (m - seen) / (2 * p) : 0);
       if
       :: k == 0 -> k = 1
       :: else
       fi;
       b = r_next; /* fetch_add(next, k) */
       r_next = r_next + k;
       if
       :: b >= m -> seen = 0; k = 0; b = 0; break
       :: else
       fi;
       assert(me == 0 || d_gen[me] == g);
       seen = (b + k < m -> b + k : m);
       do
       :: b < seen -> CHUNK(b); b++
       :: else -> break
       od
     }
  od
}

/* run_joined (after the hand-on, if any) and the leave. */
inline run_joined(me) {
  if
  :: atomic {
       d_mode[me] == ST_EACH -> assert(d_gen[me] == g); CHUNK(me)
     }
  :: atomic { d_mode[me] != ST_EACH -> assert(d_gen[me] == g) };
    run_greedy(me, d_m[me], d_p[me])
  fi;
  atomic { /* leave: fetch_sub(active) */
    inuse[me] = 0;
    assert(s_active > 0);
    s_active--;
    ok = 0;
    g = 0
  }
}

/* run_region, by the holder `me`, of go word gw (next_go's, or the
 * resync's); keep: leave the team held at the end (a resync, which a region
 * or the shutdown follows).  Precondition: me holds the team.  Locals are
 * cleared once used so that states differing only in dead values are one
 * state. */
inline run_region(me, m, p, mode, keep) {
  atomic {
    g = GO_GEN(gw);
    tr = (p >= TREE_MIN);
    c = 0;
    do /* ghost: the new region's chunk counts */
    :: c < MAXCH -> cnt[c] = 0; c++
    :: else -> c = 0; break
    od
  }
  if
  :: mode == ST_STATIC && tr -> done_cnt[0] = 0
  :: mode == ST_STATIC && !tr ->
    if
    :: left_base + p - 1 > LEFT_MAX ->
#ifndef MUT_NO_LEFT_RESET
      s_left = 0; /* sync_reset(false, 0): a CAS loop, one update */
#endif
      left_base = 0
    :: else
    fi
  :: else ->
    r_next = 0;
    atomic { /* sync_reset(true, gen) */
      s_gen = g;
      s_closed = 0;
      s_left = 0;
#ifdef MUT_RESET_ACTIVE
      s_active = 0
#endif
    }
    left_base = 0
  fi;
#if defined(MUT_RESYNC_LEAVES_OUT)
  hand_on(0, p, gw, m, p, mode, tr, DELEG, 1);
#else
  hand_on(0, p, gw, m, p, mode, tr, DELEG, !keep);
#endif
#ifdef SENTINEL_MODE
  if
  :: asleep ->
    poked = 1; /* fetch_add(wake_seq) */
    if
    :: sentinel_id == 0 -> wake_requested(p)
    :: else
    fi;
    asleep = 0
  :: else
  fi;
#endif
  if /* a flat static region waits for the workers it handed chunks to */
  :: mode == ST_STATIC && !tr ->
    atomic {
      i = 1;
      do
      :: i < p ->
#ifndef MUT_LEFT_OUT_COUNTED
        if
        :: !(lout & (1 << i)) -> left_base++
        :: else
        fi;
#else
        left_base++;
#endif
        i++
      :: else -> i = 0; break
      od;
      target = left_base
    }
  :: else
  fi;
  /* the holder's own share, as participant 0, and a static region's chunks
   * of the workers left out */
  if
  :: mode == ST_GREEDY -> run_greedy(0, m, p)
  :: else ->
    atomic {
      CHUNK(0);
#ifndef MUT_LEFT_OUT_NOCHUNK
      i = 1;
      do
      :: i < p && mode == ST_STATIC && (lout & (1 << i)) -> CHUNK(i); i++
      :: i < p && !(mode == ST_STATIC && (lout & (1 << i))) -> i++
      :: else -> i = 0; break
      od
#endif
    }
  fi;
  lout = 0;
  if
  :: mode == ST_STATIC && tr -> atomic { done_cnt[0] == kids; kids = 0 } /* WAIT_UNTIL */
  :: mode == ST_STATIC && !tr -> atomic { s_left == target; target = 0 } /* WAIT_UNTIL */
  :: else ->
#ifdef MUT_NO_CLOSE
    w = s_active; /* a load: a later join is not ordered against it */
#else
    atomic { w = s_active; s_closed = 1 }; /* fetch_or(closed) */
#endif
    if
    :: w != 0 -> atomic { s_active == 0; w = 0 } /* WAIT_UNTIL */
    :: else
    fi
  fi;
  /* the region is over: every chunk ran once, every participant is out;
   * then the release store of owner */
  atomic {
    c = 0;
    do
    :: c < NP -> assert(!inuse[c]); c++
    :: else -> c = 0; break
    od;
    do
    :: c < m -> /* each: a participant that joins after the close never runs */
      assert(cnt[c] == 1 || (mode == ST_EACH && c > 0 && cnt[c] == 0));
      c++
    :: else -> c = 0; break
    od;
    g = 0;
    gw = 0;
    tr = 0;
    kids = 0;
    if
    :: keep
    :: else -> owner = 0
    fi
  }
}

/* next_go: the go word of the next generation, in gw (holder-only data:
 * one step), after the resync when the generation is about to wrap. */
inline next_go(me, flags) {
  if
  :: tgen == GENMOD - 1 ->
#if defined(MUT_NO_RESYNC)
    tgen = 0
#else
#ifdef MUT_SAME_RESYNC
    resync_gen = 1;
#else
    resync_gen = (resync_gen == 1 -> 2 : 1);
#endif
    gw = resync_gen * 4 + GO_STATIC;
    run_region(me, NP, NP, ST_STATIC, 1);
    tgen = 2
#endif
  :: else
  fi;
  atomic {
    tgen++;
    assert(tgen < GENMOD);
    gw = tgen * 4 + flags
  }
}

inline run_parallel(me, m, p, mode) {
  next_go(me, (mode == ST_STATIC -> GO_STATIC : 0));
  run_region(me, m, p, mode, 0)
}

proctype Holder(byte me) {
  byte k, p, m, mode, g, gw, i, prev, c, w, j, b, seen, target;
  byte kids, rest, lo, hi2;
  bool took, asleep, tr;
  byte lout;
  byte n;
  do
  :: n < NREG ->
    atomic { /* a region (local choices), then try_take */
      if
      :: MODES & 1 -> mode = ST_STATIC
      :: MODES & 2 -> mode = ST_GREEDY
      :: MODES & 4 -> mode = ST_EACH
      fi;
      select(p : PMIN .. NP);
      m = (mode == ST_GREEDY -> M : p);
      if
      :: owner == 0 -> owner = me; took = 1
      :: else -> took = 0
      fi
    }
#ifdef BUSY_WAIT
    if
    :: !took -> atomic { owner == 0 -> owner = me }; took = 1
    :: else
    fi;
#endif
    if
    :: took && running -> run_parallel(me, m, p, mode)
#ifdef MUT_KEEP_OWNER
    :: took && !running /* forgets the release */
#else
    :: took && !running -> owner = 0 /* shut down meanwhile: serial */
#endif
    :: !took /* busy: serial on the caller, the team untouched */
    fi;
    atomic { n++; p = 0; m = 0; mode = 0; took = 0 }
  :: else -> break
  od;
  done++
}

proctype Worker(byte me) {
  byte seen_go, cur, g, c, j, k, b, seen;
  byte i, prev, kids, rest, lo, hi2;
  byte lout; /* hand_on's: never set by a worker */
  byte ok; /* 0, 1; after a join, 2 for a leader */
  bool asleep;
top:
  atomic {
    cur = go[me]; /* load acquire */
    if
    :: cur == seen_go -> cur = 0; goto idle
    :: else -> seen_go = cur; cur = 0; g = GO_GEN(seen_go)
    fi
  }
  if
  :: stopping -> goto out
  :: else
  fi;
  if
  :: seen_go & GO_STATIC -> /* run_static: its descriptor, its chunk, left++ */
    if
    :: atomic {
         d_hi[me] == me + 1 -> /* no subtree: read, run, in one step */
         assert(d_gen[me] == g && d_mode[me] == ST_STATIC && d_p[me] > me);
         inuse[me] = 1;
         CHUNK(me)
       }
    :: atomic {
         d_hi[me] != me + 1 ->
         assert(d_gen[me] == g && d_mode[me] == ST_STATIC && d_p[me] > me);
         inuse[me] = 1
       };
       /* a leader: hand on to its subtree, then its own chunk */
#ifndef MUT_TREE_LATE_RESET
       done_cnt[me] = 0;
#endif
       hand_on(me, d_hi[me], seen_go, d_m[me], d_p[me], ST_STATIC, d_tree[me], 0, 0);
#ifdef MUT_TREE_LATE_RESET
       done_cnt[me] = 0; /* after handing on: a child's report is lost */
#endif
       atomic { CHUNK(me) }
    fi;
    /* The tree join: wait for the children, report up.  The last look at
     * `done` and the report are one step: nobody else writes `done` then. */
    if
    :: atomic {
#ifdef MUT_TREE_NO_CHILD_WAIT
         d_tree[me] -> /* reports before its children did */
#else
         d_tree[me] && (kids == 0 || done_cnt[me] == kids) -> /* WAIT_UNTIL */
#endif
         inuse[me] = 0;
#ifdef MUT_TREE_WRONG_COUNTER
         done_cnt[0]++; /* to the holder's, not its leader's */
#else
         done_cnt[d_up[me]]++;
#endif
         kids = 0;
         g = 0
       }
    :: atomic {
         !d_tree[me] -> /* flat: left++ */
         inuse[me] = 0;
         assert(s_left < LEFT_MAX); /* does not carry into `closed` */
         s_left++;
         g = 0
       }
    fi
  :: else ->
    atomic { /* join: fetch_add(active), kept for our open region */
      s_active++;
#ifdef MUT_JOIN_NOCHECK
      ok = 1;
#else
      ok = (s_gen == g && !s_closed);
#endif
      if
      :: ok -> /* a leader (2) hands on first */
        inuse[me] = 1;
        ok = (d_hi[me] != me + 1 -> 2 : 1)
      :: else
      fi
    }
    if
    :: ok == 2 -> /* run_joined: hand on to its subtree first */
      hand_on(me, d_hi[me], seen_go, d_m[me], d_p[me], d_mode[me], d_tree[me], 0, 0);
      kids = 0;
      run_joined(me)
    :: ok == 1 -> run_joined(me)
    :: else -> /* a stale join: undo it */
#ifdef MUT_TREE_STALE_FORWARD
      if /* hands on a region it did not join */
      :: d_hi[me] != me + 1 ->
        hand_on(me, d_hi[me], seen_go, d_m[me], d_p[me], d_mode[me], d_tree[me], 0, 0);
        kids = 0
      :: else
      fi;
#endif
      atomic { assert(s_active > 0); s_active--; g = 0 }
    fi
  fi;
  goto top;

  /* Idle: spinning is waiting for the go word to change; the deadline may
   * pass at any time. */
idle:
end_idle:
  if
  :: go[me] != seen_go -> goto top
  :: true
  fi;
#ifdef SENTINEL_MODE
  atomic {
    if
    :: sentinel_id == 0 -> sentinel_id = me; ok = 1
    :: else -> ok = 0
    :: true -> ok = 0 /* overcommitted(): the role is not taken */
    fi
  }
  if
  :: ok -> /* be_sentinel */
    atomic { ok = 0; poked = 0 }; /* seq = load(wake_seq) */
#ifndef MUT_SENTINEL_NOENTRYSCAN
    wake_requested(NP); /* what a holder left before that load */
#endif
end_sentinel:
    do
    :: go[me] != seen_go -> break
#ifndef MUT_SENTINEL_NOPOLL
    :: poked -> poked = 0; wake_requested(NP)
#endif
    :: resigns < RESIGNS -> resigns++; break /* overcommitted(), passed by */
    od;
    sentinel_id = 0;
#ifndef MUT_SENTINEL_NOSCAN
    wake_requested(NP);
#endif
    goto top
  :: else
  fi;
#endif
  /* the CAS seen -> seen|SLEEP */
#ifdef MUT_LOAD_SLEEP
  ok = (go[me] == seen_go);
  if
  :: ok -> go[me] = seen_go | GO_SLEEP
  :: else
  fi;
#else
  atomic {
    ok = (go[me] == seen_go);
    if
    :: ok -> go[me] = seen_go | GO_SLEEP
    :: else
    fi
  }
#endif
  if
  :: !ok -> goto top
  :: else -> ok = 0
  fi;
  do
  :: /* futex_wait(go, seen|SLEEP) */
    atomic {
#ifdef MUT_NO_FUTEX_RECHECK
      queued[me] = 1
#else
      if
      :: go[me] == (seen_go | GO_SLEEP) -> queued[me] = 1
      :: else
      fi
#endif
    }
end_sleep:
    if
    :: atomic {
         !queued[me] ->
         if
         :: go[me] == (seen_go | GO_SLEEP)
         :: else -> break
         fi
       }
    :: atomic { queued[me] && spur > 0 -> spur--; queued[me] = 0 }
    fi
  od;
  goto top;
out:
  exited++
}

/* tt_team_shutdown, from a thread of its own */
proctype Shutdown() {
  byte k, g, gw, i, prev, c, w, j, b, seen, target;
  byte kids, rest, lo, hi2;
  bool asleep, tr;
  byte lout;
  byte me = NH + 1;
#ifdef SHUTDOWN_LAST
  done == NH; /* after the host threads' regions */
#endif
  atomic { owner == 0 -> owner = NH + 1 } /* take_waiting */
  next_go(me, 0);
  stopping = 1;
  i = 1;
  do
  :: i <= NW ->
    atomic { prev = go[i]; go[i] = gw }
    if
    :: prev & GO_SLEEP -> futex_wake(i)
    :: else
    fi;
    atomic { prev = 0; i++ }
  :: else -> break
  od;
  exited == NW; /* pthread_join */
  running = 0;
  owner = 0;
  done++
}

init {
  byte i;
  atomic {
    i = 1;
    do /* d_hi: a flat descriptor's value, so that the first hand-off of a
        * flat region does not make states that differ only in it */
    :: i <= NW -> d_hi[i] = i + 1; run Worker(i); i++
    :: else -> break
    od;
    i = 1;
    do
    :: i <= NH -> run Holder(i); i++
    :: else -> break
    od;
    run Shutdown();
    i = 0
  }
  done == NH + 1;
  assert(owner == 0 && exited == NW && !running && sentinel_id == 0);
}
