/* teams: a Promela model of the region protocol of launcher/team.c, for spin.
 *
 * What is modelled, as team.c implements it (names are team.c's):
 *   - host threads that take team.owner by CAS (try_take) and, when that
 *     fails, run serially (the busy rule) or, with -DBUSY_WAIT, wait for the
 *     team (take_waiting); the holder's release store of owner;
 *   - run_parallel: next_gen, the descriptor, the reset of region.sync that
 *     keeps `active`, the exchange of each needed worker's go word and the
 *     futex wake when the old word had SLEEP, the holder's own share (chunk 0,
 *     or greedy chunks from region.next), the close (fetch_or closed) and the
 *     wait for active == 0 (greedy, each) or left == p-1 (static);
 *   - worker_main: the go-word check, run_static + left++, join (fetch_add
 *     active, keep it only for our generation and not closed, else undo),
 *     run_joined (each: chunk id; greedy: chunks from region.next) + leave;
 *     the idle rule, whose deadline is a nondeterministic choice (spinning is
 *     a blocked guard on the go word), the CAS seen -> seen|SLEEP and the
 *     futex_wait loop;
 *   - the futex: futex_wait queues the worker only while the word still has
 *     the value (atomically), futex_wake dequeues it, and up to SPURIOUS
 *     wake-ups without a wake (spurious returns, EINTR from signals) happen
 *     anywhere in a run;
 *   - tt_team_shutdown, concurrent with the host threads: take_waiting,
 *     stopping, a new go word for every worker (+ wake), join, running = 0,
 *     release; host threads that take the team afterwards run serially;
 *   - with -DSENTINEL (TEAMS_IDLE=sentinel): the CAS on team.sentinel_id by a
 *     worker whose deadline passed, be_sentinel (spin on the go word, scan
 *     the wake_req flags when wake_seq moves, resign, scan once more), and the
 *     holder's delegation (wake_req = 1 for each sleeper it found, wake_seq++,
 *     wake the requested ones itself when it reads no sentinel).
 * Abstracted: the clock (the deadline and the push of the deadline while the
 * region a worker ran still runs only decide *when* a worker tries to sleep,
 * which is free here), the chunk function (one step that counts the chunk),
 * and memory orders: spin explores interleavings of sequentially consistent
 * steps.  Every step that is one atomic instruction in team.c is one atomic
 * step here; the holder's plain descriptor stores are one step, and the
 * ghost variable `users` plus the generation check at every descriptor read
 * catch any reader that overlaps them.  The release/acquire pairs that make
 * the descriptor visible are not checked by this model (ThreadSanitizer runs
 * of tests/test-stress.c cover them).
 *
 * Properties (spin -a, pan in safety mode):
 *   - no invalid end state: every process ends (workers exit at shutdown)
 *     or rests in a valid idle state (end* labels); a holder waiting for a
 *     worker that sleeps on is a deadlock, so this also shows no lost wake-up;
 *   - every chunk of every region runs exactly once (cnt[]), checked at each
 *     chunk and when the holder's wait ends;
 *   - a participant reads the descriptor only of the generation it was
 *     handed (static) or joined (greedy/each), and the holder never rewrites
 *     the descriptor while a participant uses it;
 *   - the region's participants are all out when the holder releases, the
 *     team is released at the end (owner == 0), `active` never underflows.
 *
 * Mutations (-DMUT_*), each of which must make the check fail (see
 * tests/model-check.sh): MUT_LOAD_SLEEP (the worker loads its go word and
 * stores SLEEP instead of the CAS), MUT_STORE_GO (the holder loads the go
 * word, then stores it, instead of the exchange), MUT_RESET_ACTIVE (the sync
 * reset clears `active`), MUT_JOIN_NOCHECK (a join is kept even on a closed
 * or newer region), MUT_NO_CLOSE (the holder loads `active` instead of
 * closing the region with fetch_or), MUT_NO_FUTEX_RECHECK (futex_wait sleeps
 * without comparing the word), MUT_KEEP_OWNER (a host thread that finds the
 * team shut down forgets to release it), MUT_SENTINEL_NOSCAN (the sentinel
 * does not scan after resigning).
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

#define NP (NW + 1)
/* Generations: team.gen counts 1, 2, ... skipping 0.  With GENMOD the model
 * wraps it as team.c's 30-bit field does, modulo GENMOD; by default the
 * bounded run never wraps. */
#ifndef GENMOD
#define GENMOD 64
#endif
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
byte tgen;         /* team.gen (holder-only) */
bool running = 1;  /* team.running */
bool stopping;     /* team.stopping */
/* region descriptor (holder writes before publishing) */
byte r_gen;        /* ghost: the generation the descriptor describes */
byte r_m;
byte r_p;
byte r_mode;
byte r_next;       /* region.next */
/* region.sync = [gen | closed | left | active] */
byte s_gen;
bool s_closed;
byte s_left;
byte s_active;
/* worker.go = gen*4 | STATIC<<1 | SLEEP */
byte go[NP];
/* sentinel mode: team.sentinel_id, worker.wake_req, and team.wake_seq as
 * the sentinel sees it: `poked` is 1 when wake_seq moved since the sentinel
 * last loaded it.  Only the sentinel loads wake_seq and there is at most one,
 * so "seq = load(wake_seq)" is "poked = 0" and "load(wake_seq) != seq" is
 * "poked": the same behaviours with one bit instead of two counters. */
byte sentinel_id;
bool poked;
bool wake_req[NP];

/* ---- the futex and the ghosts ---- */
bool queued[NP];   /* worker queued in futex_wait on its go word */
byte spur = SPURIOUS;
byte users;        /* participants between reading the descriptor and leaving */
byte cnt[MAXCH];    /* runs of chunk c of the current region */
byte exited;       /* workers that returned from worker_main */
byte done;         /* host threads and shutdown that finished */

#define CHUNK(c)                                                               \
  cnt[c]++;                                                                    \
  assert(cnt[c] == 1)

inline futex_wake(w) {
  queued[w] = 0
}

/* Wake every worker whose wake-up was left to the sentinel (wake_requested).
 * The load and the exchange of wake_req[j] are one step (the exchange
 * decides), and so is the futex_wake that follows a 1: delaying a wake
 * cannot matter, since the go word the woken worker re-checks was changed
 * before wake_req was set. */
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

/* run_parallel, by the holder `me`.  Precondition: me holds the team.
 * Locals are cleared once used so that states differing only in dead
 * values are one state. */
inline run_parallel(me, m, p, mode) {
  atomic {
    tgen = (tgen + 1) % GENMOD;
    if
    :: tgen == 0 -> tgen = 1
    :: else
    fi;
    g = tgen;
    /* the descriptor (plain stores) */
    assert(users == 0); /* nobody still reads the old one */
    r_gen = g;
    r_m = m;
    r_p = p;
    r_mode = mode;
    r_next = (mode == ST_GREEDY -> 0 : m);
    c = 0;
    do /* ghost: the new region's chunk counts */
    :: c < MAXCH -> cnt[c] = 0; c++
    :: else -> c = 0; break
    od
  }
  /* reset region.sync: a CAS loop, which is one atomic update */
  atomic {
    s_gen = g;
    s_closed = 0;
    s_left = 0;
#ifdef MUT_RESET_ACTIVE
    s_active = 0
#endif
  }
  i = 1;
  do
  :: i < p ->
#ifdef MUT_STORE_GO
    prev = go[i];
    go[i] = g * 4 + (mode == ST_STATIC -> GO_STATIC : 0);
#else
    atomic {
      prev = go[i];
      go[i] = g * 4 + (mode == ST_STATIC -> GO_STATIC : 0)
    }
#endif
    if
    :: prev & GO_SLEEP ->
#ifdef SENTINEL
      wake_req[i] = 1;
      asleep = 1
#else
      futex_wake(i)
#endif
    :: else
    fi;
    atomic { prev = 0; i++ }
  :: else -> i = 0; break
  od;
#ifdef SENTINEL
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
  /* the holder's own share, as participant 0 */
  if
  :: mode == ST_GREEDY ->
    do
    :: atomic {
         c = r_next; r_next++; /* fetch_add(next) and the chunk */
         if
         :: c < m -> CHUNK(c); c = 0
         :: else -> c = 0; break
         fi
       }
    od
  :: else -> atomic { CHUNK(0) }
  fi;
  if
  :: mode == ST_STATIC -> s_left == p - 1 /* WAIT_UNTIL */
  :: else ->
#ifdef MUT_NO_CLOSE
    w = s_active; /* a load: joins after it are not ordered against it */
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
    assert(users == 0);
    c = 0;
    do
    :: c < m ->
      assert(cnt[c] == 1 || (mode == ST_EACH && c > 0 && cnt[c] == 0));
      c++
    :: else -> c = 0; break
    od;
    g = 0;
    owner = 0
  }
}

proctype Holder(byte me) {
  byte k, p, m, mode, g, i, prev, c, w, j;
  bool took, asleep;
  do
  :: k < NREG ->
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
    atomic { k++; p = 0; m = 0; mode = 0; took = 0 }
  :: else -> break
  od;
  done++
}

proctype Worker(byte me) {
  byte seen, cur, g, c, j;
  bool ok;
top:
  atomic {
    cur = go[me]; /* load acquire */
    if
    :: cur == seen -> cur = 0; goto idle
    :: else -> seen = cur; cur = 0
    fi
  }
  if
  :: stopping -> goto out
  :: else
  fi;
  g = GO_GEN(seen);
  if
  :: seen & GO_STATIC -> /* run_static: read the descriptor, run, left++ */
    atomic { assert(r_gen == g && r_p > me); users++; CHUNK(me) };
    atomic { users--; s_left++; g = 0 }
  :: else ->
    atomic { /* join: fetch_add(active), keep it for our open region */
      s_active++;
#ifdef MUT_JOIN_NOCHECK
      ok = 1;
#else
      ok = (s_gen == g && !s_closed);
#endif
      if
      :: ok -> users++
      :: else
      fi
    }
    if
    :: ok -> /* run_joined */
      if
      :: atomic {
           r_mode == ST_EACH -> assert(r_gen == g);
           if
           :: me < r_p -> CHUNK(me)
           :: else
           fi
         }
      :: atomic { r_mode != ST_EACH -> assert(r_gen == g) };
        do
        :: atomic {
             assert(r_gen == g);
             c = r_next; r_next++;
             if
             :: c < r_m -> CHUNK(c); c = 0
             :: else -> c = 0; break
             fi
           }
        od
      fi;
      atomic { users--; assert(s_active > 0); s_active--; ok = 0; g = 0 } /* leave */
    :: else -> /* a stale join: undo it */
      atomic { assert(s_active > 0); s_active--; g = 0 }
    fi
  fi;
  goto top;

  /* Idle: spinning is waiting for the go word to change; the deadline may
   * pass at any time. */
idle:
end_idle:
  if
  :: go[me] != seen -> goto top
  :: true
  fi;
#ifdef SENTINEL
  atomic {
    if
    :: sentinel_id == 0 -> sentinel_id = me; ok = 1
    :: else -> ok = 0
    fi
  }
  if
  :: ok -> /* be_sentinel */
    atomic { ok = 0; poked = 0 }; /* seq = load(wake_seq) */
end_sentinel:
    do
    :: go[me] != seen -> break
    :: poked -> poked = 0; wake_requested(NP)
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
  ok = (go[me] == seen);
  if
  :: ok -> go[me] = seen | GO_SLEEP
  :: else
  fi;
#else
  atomic {
    ok = (go[me] == seen);
    if
    :: ok -> go[me] = seen | GO_SLEEP
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
      :: go[me] == (seen | GO_SLEEP) -> queued[me] = 1
      :: else
      fi
#endif
    }
end_sleep:
    if
    :: atomic { !queued[me] -> if
                               :: go[me] == (seen | GO_SLEEP)
                               :: else -> break
                               fi }
    :: atomic { queued[me] && spur > 0 -> spur--; queued[me] = 0 }
    fi
  od;
  goto top;
out:
  exited++
}

/* tt_team_shutdown, from a thread of its own */
proctype Shutdown() {
  byte i, prev;
#ifdef SHUTDOWN_LAST
  done == NH; /* after the host threads' regions */
#endif
  atomic { owner == 0 -> owner = NH + 1 } /* take_waiting */
  atomic {
    stopping = 1;
    tgen = (tgen + 1) % GENMOD;
    if
    :: tgen == 0 -> tgen = 1
    :: else
    fi
  }
  i = 1;
  do
  :: i <= NW ->
    atomic { prev = go[i]; go[i] = tgen * 4 }
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
    do
    :: i <= NW -> run Worker(i); i++
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
  assert(owner == 0 && users == 0 && exited == NW && !running);
#ifdef SENTINEL
  assert(sentinel_id == 0);
#endif
}
