/* teams: a Promela model of the team's region protocol, for spin.
 *
 * The protocol is docs/protocol.md (the numbered invariants); the code is
 * launcher/fork.c (publishing and joining), idle.c (the idle loop and the
 * sentinel), lifecycle.c (take, release, shutdown) and team.c (the busy
 * rule).  tests/model-check.sh checks this model in the test suite, with
 * mutants that must fail; tests/protocol-names.py fails when a name cited
 * here or in docs/protocol.md is gone from the code.  Change them together.
 *
 * Modelled, with the code's names (the items of docs/protocol.md in
 * brackets): holders that take team.owner (tt__try_take; -DBUSY_WAIT
 * tt__take_waiting), re-check team.running (15), run tt__run_parallel and
 * release, or run serially when the take fails (14); with -DWAYS, way.c's
 * choice of serial (the caller alone: no take) or of openmp (lent: take,
 * publish nothing, release: 43); tt__next_go and its resync (16-18); run_region
 * with the static `left` target, the greedy/each reset (10-12), hand_on
 * (descriptor, exchange of the go word, futex wake or -DSENTINEL_MODE's
 * delegation: 6, 9, 21), the holder's share, the waits and the close;
 * tt__run_greedy's claims (13); the static chunks' claims, the worker's
 * and, for a late participant's chunk, the holder's (claim_late, 10);
 * workers (tt__worker_main, tt__worker_region): the go-word and stopping
 * checks, the claim, run_static and its report, join / run_joined /
 * leave, a stale join undone (7, 8, 10, 11),
 * the CAS to SLEEP and the futex_wait loop (9, 19), be_sentinel (20, 21);
 * the futex, with up to SPURIOUS returns without a wake per run; shutdown
 * (shutdown_locked) beside the hosts (23); the tree (37-42) for regions of
 * TREE_MIN participants or more, branching TREE_K.
 * Abstracted: the clock and all that only decides when a worker tries to
 * sleep (spin_ns, the hints team.running_gen and team.holder_cpu,
 * `awake` and tt__overcommitted, sched_yield): a worker
 * may try at any time; way.c's measurements: a nondeterministic choice;
 * the chunk function: one step that counts the chunk.  Memory orders: spin
 * explores interleavings of sequentially consistent steps, each atomic
 * instruction of the code one step, a descriptor's plain stores one step
 * (the ghost inuse[w] and the generation check at each read show they never
 * overlap a reader); the release/acquire pairs are checked by the
 * ThreadSanitizer runs of the suite instead.
 *
 * Properties (pan in safety mode): no invalid end state (a holder waiting
 * for a worker that sleeps on is one: the no-lost-wake-up check); every
 * chunk of every region exactly once (cnt[]); descriptors read only for
 * their own generation (d_gen, inuse); `active` never underflows and `left`
 * never carries into `closed`; at the end the team released, shut down, and
 * no sentinel left.
 *
 * Mutations (-DMUT_*): each is a one-line change of this model, written
 * where the model has the step it breaks; tests/model-check.sh runs the
 * ones that must make the check fail and says what each breaks.
 *
 * Generations wrap modulo GENMOD (2^29 in the code): regions take 3 ..
 * GENMOD - 1, resyncs 1 and 2 in turn; the default GENMOD never wraps in
 * these bounded runs, tests/model-check.sh wraps with 4 and 5. */

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
#define LEFT_MAX 3 /* largest value of region.sync's `left` (0xffff in the code) */
#endif
/* Generations: team.gen counts 1, 2, ... skipping 0, modulo GENMOD (2^29 in
 * the code); by default the bounded runs never wrap. */
#ifndef GENMOD
#define GENMOD 32 /* a go word, GENMOD * 8, fits a byte */
#endif

/* The tree (protocol 37-42): regions of TREE_MIN participants or more
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
/* -DNO_CLAIM: every static region is a first-touch one (the holder claims
 * no late participant's chunk and waits for every worker); the worker's own
 * claim stays.  tests/model-check.sh says where, and why. */
#ifdef NO_CLAIM
#define CLAIMS 0
#else
#define CLAIMS 1
#endif

#define NP (NW + 1)
#if M > NW + 1
#define MAXCH M
#else
#define MAXCH (NW + 1)
#endif

#define WAY_TEAM 0
#define WAY_OPENMP 1
#define WAY_SERIAL 2

#define ST_STATIC 0
#define ST_GREEDY 1
#define ST_EACH 2

#define GO_SLEEP 1
#define GO_STATIC 2
#define GO_CLAIM 4
#define GO_GEN(w) ((w) / 8)

/* ---- the code's words (team-state.h) ---- */
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
 * holder's, workers[0].done in the code) */
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
/* the generation of the last flat region each worker sat out (fork.c's
 * holder-only sat_out_gen; 0: none since it was last handed one) */
byte sat[NP];
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
byte exited;       /* workers that returned from tt__worker_main */
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
 * hi - me - 1) spans that split me+1..hi-1 as tt__block does, with its span as
 * its subtree.  For each: the descriptor, the exchange of its go word, and
 * the wake-up when the old word had SLEEP (deleg: left to the sentinel).
 * Leaves the number of children in kids. */
inline hand_on(h_me, h_hi, h_gw, h_m, h_p, h_mode, h_tr, h_deleg, h_wake) {
  atomic {
    assert(h_me == 0 || d_gen[h_me] == g); /* reads its own descriptor */
    rest = h_hi - h_me - 1;
    kids = (h_tr -> TREE_K : rest);
    if
    :: kids > rest -> kids = rest
    :: else
    fi;
    i = 0;
    nh = 0
  }
  do
  :: i < kids && !h_tr && !h_wake && (go[h_me + 1 + i] & GO_SLEEP) ->
    /* a wake not made (10): the sleeper's word is left as it is, and the
     * holder will run its static chunk (a load, then holder-only data) */
#ifdef MUT_SIT_OUT_EXCHANGE
    go[h_me + 1 + i] = h_gw; /* published without its wake-up */
#endif
#ifdef MUT_SIT_OUT_COUNTED
    nh++;
#endif
    atomic { sat[h_me + 1 + i] = g; i++ }
  :: i < kids && (h_tr || h_wake || !(go[h_me + 1 + i] & GO_SLEEP)) ->
    nh++;
    sat[h_me + 1 + i] = 0;
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
  hand_on(0, p, gw, m, p, mode, tr, DELEG, wake);
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
  if /* a flat static region waits for the p - 1 workers it handed it to */
  :: mode == ST_STATIC && !tr -> atomic { left_base = left_base + nh; target = left_base }
  :: else
  fi;
  /* the holder's own share, as participant 0 */
  if
  :: mode == ST_GREEDY -> run_greedy(0, m, p)
  :: else -> atomic { CHUNK(0) }
  fi;
  /* the chunks of the workers that sat it out: the holder's (holder-only
   * data: one step) */
  atomic {
    c = 1;
    do
    :: c < p ->
      if
#ifndef MUT_SIT_OUT_LOST
      :: mode == ST_STATIC && sat[c] == g -> CHUNK(c)
#endif
      :: else
      fi;
      c++
    :: else -> c = 0; break
    od
  }
  if
  :: mode == ST_STATIC && tr -> atomic { done_cnt[0] == kids; kids = 0 } /* WAIT_UNTIL */
  :: mode == ST_STATIC && !tr ->
    if
#ifdef MUT_CLAIM_RESYNC
    :: CLAIMS -> /* claims in a resync too: a worker may miss its word */
#else
    :: CLAIMS && !keep -> /* claim_late (not in a resync): each chunk no worker claimed */
#endif
      /* Each claim is a CAS go: gw -> gw | CLAIM on its own worker's word
       * (the load before it decides nothing), then the chunk, which only
       * the holder sees: they commute with every step of other words, so
       * the loop is one step. */
      atomic {
        c = 1;
        do
        :: c < p ->
          if
          :: go[c] == gw ->
            go[c] = gw | GO_CLAIM;
#ifndef MUT_CLAIM_LOST
            CHUNK(c);
#endif
            left_base--; /* not waited for */
            target = left_base
#ifdef MUT_CLAIM_EARLY_END
          :: else -> left_base--; target = left_base /* its worker's, not waited for */
#else
          :: else /* its worker's: waited for */
#endif
          fi;
          c++
        :: else -> c = 0; break
        od
      }
    :: else
    fi;
    atomic { s_left == target; target = 0 } /* WAIT_UNTIL */
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
    gw = resync_gen * 8 + GO_STATIC;
    wake = 1;
    run_region(me, NP, NP, ST_STATIC, 1);
    tgen = 2
#endif
  :: else
  fi;
  atomic {
    tgen++;
    assert(tgen < GENMOD);
    gw = tgen * 8 + flags
  }
}

inline run_parallel(me, m, p, mode) {
  next_go(me, (mode == ST_STATIC -> GO_STATIC : 0));
#ifdef SIT_OUT
  if /* way.c: wake the sleepers or leave them out */
  :: wake = 1
  :: wake = 0
  fi;
#endif
  run_region(me, m, p, mode, 0);
  wake = 1
}

proctype Holder(byte me) {
  byte k, p, m, mode, g, gw, i, prev, c, w, j, b, seen, target;
  byte kids, rest, lo, hi2, nh;
  bool took, asleep, tr, wake = 1;
  byte n, way; /* way.c's choice: WAY_TEAM, WAY_OPENMP, WAY_SERIAL */
  do
  :: n < NREG ->
    atomic { /* a region (local choices), its way, then tt__try_take */
      if
      :: MODES & 1 -> mode = ST_STATIC
      :: MODES & 2 -> mode = ST_GREEDY
      :: MODES & 4 -> mode = ST_EACH
      fi;
      select(p : PMIN .. NP);
      m = (mode == ST_GREEDY -> M : p);
#ifdef WAYS
      if
      :: way = WAY_TEAM
      :: way = WAY_OPENMP
      :: way = WAY_SERIAL
      fi;
#endif
      if
      :: way == WAY_SERIAL -> took = 0 /* on the caller alone: no take */
      :: way != WAY_SERIAL && owner == 0 -> owner = me; took = 1
      :: way != WAY_SERIAL && owner != 0 -> took = 0
      fi
    }
#ifdef BUSY_WAIT
    if
    :: !took && way != WAY_SERIAL -> atomic { owner == 0 -> owner = me }; took = 1
    :: else
    fi;
#endif
    if
    :: took && running && way == WAY_TEAM -> run_parallel(me, m, p, mode)
#ifdef MUT_LEND_KEEPS_OWNER
    :: took && running && way == WAY_OPENMP /* forgets the release */
#else
    :: took && running && way == WAY_OPENMP -> owner = 0 /* lent: nothing published */
#endif
#ifdef MUT_KEEP_OWNER
    :: took && !running /* forgets the release */
#else
    :: took && !running -> owner = 0 /* shut down meanwhile: serial */
#endif
    :: !took /* busy: serial on the caller, the team untouched */
    fi;
    atomic { n++; p = 0; m = 0; mode = 0; took = 0; way = WAY_TEAM }
  :: else -> break
  od;
  done++
}

proctype Worker(byte me) {
  byte seen_go, cur, g, c, j, k, b, seen;
  byte i, prev, kids, rest, lo, hi2, nh;
  byte ok; /* 0, 1; after a join, 2 for a leader */
  bool asleep;
top:
  atomic {
    cur = go[me]; /* load acquire */
    if
    :: cur == seen_go -> cur = 0; goto idle
#ifndef MUT_LATE_RUNS_CLAIMED
    :: cur != seen_go && (cur & GO_STATIC) && (cur & GO_CLAIM) ->
      /* the holder claimed the chunk first: nothing of it is read or run
       * (and `stopping`, looked at in the next word's step, is as well) */
      seen_go = cur; cur = 0; goto idle
#endif
    :: else -> seen_go = cur; cur = 0; g = GO_GEN(seen_go)
    fi
  }
  if
  :: stopping -> goto out
  :: else
  fi;
  if
  :: seen_go & GO_STATIC -> /* the claim, then run_static: its descriptor, its chunk, left++ */
#ifdef MUT_CLAIM_NOCAS
    ok = (go[me] == seen_go); /* a load; the store below is another step */
#define WON ok
#else
#define WON (go[me] == seen_go) /* the CAS go: seen -> seen | CLAIM */
#endif
    /* The claim, and with it the descriptor's read (nothing of the
     * descriptor before it); for a worker without a subtree its chunk too,
     * in one step: only the holder's claim, which then fails, could come
     * between. */
    if
    :: atomic {
         WON && d_hi[me] == me + 1 ->
         go[me] = seen_go | GO_CLAIM;
         seen_go = seen_go | GO_CLAIM;
         ok = 0;
         assert(d_gen[me] == g && d_mode[me] == ST_STATIC && d_p[me] > me);
         inuse[me] = 1;
         CHUNK(me)
       }
    :: atomic { /* claimed by the holder, or a newer word: look again */
         !WON -> ok = 0; g = 0
       };
       goto top
    :: atomic {
         WON && d_hi[me] != me + 1 ->
         go[me] = seen_go | GO_CLAIM;
         seen_go = seen_go | GO_CLAIM;
         ok = 0;
         assert(d_gen[me] == g && d_mode[me] == ST_STATIC && d_p[me] > me);
         inuse[me] = 1
       };
       /* a leader: hand on to its subtree, then its own chunk */
#ifndef MUT_TREE_LATE_RESET
       done_cnt[me] = 0;
#endif
       /* the word it was handed, without its own claim */
       hand_on(me, d_hi[me], seen_go - GO_CLAIM, d_m[me], d_p[me], ST_STATIC, d_tree[me], 0, 1);
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
      hand_on(me, d_hi[me], seen_go, d_m[me], d_p[me], d_mode[me], d_tree[me], 0, 1);
      kids = 0;
      run_joined(me)
    :: ok == 1 -> run_joined(me)
    :: else -> /* a stale join: undo it */
#ifdef MUT_TREE_STALE_FORWARD
      if /* hands on a region it did not join */
      :: d_hi[me] != me + 1 ->
        hand_on(me, d_hi[me], seen_go, d_m[me], d_p[me], d_mode[me], d_tree[me], 0, 1);
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
  byte kids, rest, lo, hi2, nh;
  bool asleep, tr, wake = 1;
  byte me = NH + 1;
#ifdef SHUTDOWN_LAST
  done == NH; /* after the host threads' regions */
#endif
  atomic { owner == 0 -> owner = NH + 1 } /* take_waiting_with(take_cas) */
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
