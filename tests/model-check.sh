#!/bin/sh
# Check launcher/team.pml, the model of the team's region protocol, with spin.
#
#   tests/model-check.sh [MODEL]     (MODEL defaults to launcher/team.pml)
#
# Each configuration is compiled to a pan verifier in safety mode (assertions
# and invalid end states, i.e. deadlocks and lost wake-ups) and searched
# exhaustively; the state count of each is printed.  The mutations of the
# model (-DMUT_*) must each be caught: they show that the properties can
# fail.  Exit status 1 when a configuration finds an error, a mutation is not
# caught, or a search is incomplete (memory bound, depth bound).
#
# Environment: SPIN (spin), CC (cc), MODEL_MEMLIM_MB (4096), MODEL_JOBS (1:
# the searches run one at a time; 2 runs two at once, each with its own
# memory bound, so up to twice MODEL_MEMLIM_MB; the results print in order).
set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/../launcher/team.pml}
SPIN=${SPIN:-spin}
CC=${CC:-cc}
memlim=${MODEL_MEMLIM_MB:-4096}
jobs=${MODEL_JOBS:-1}

[ -r "$model" ] || { echo "model-check: no model at $model" >&2; exit 2; }
command -v "$SPIN" >/dev/null 2>&1 || { echo "model-check: $SPIN not found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/teams-model.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/team.pml"
names=
started=0

# check NAME EXPECT DEFINES...: run_check in the background, at most $jobs at
# once; its output goes to $work/NAME.out, printed in order at the end.
check() {
  names="$names $1"
  if [ "$jobs" -le 1 ]; then
    run_check "$@" >"$work/$1.out" 2>&1
    cat "$work/$1.out"
    return
  fi
  while [ $((started - $(ls "$work" | grep -c '\.done$'))) -ge "$jobs" ]; do
    sleep 1
  done
  started=$((started + 1))
  (run_check "$@" >"$work/$1.out" 2>&1; : >"$work/$1.done") &
}

# fail: a configuration failed (a file, for run_check may run in a subshell).
fail() {
  : >"$work/$name.failed"
}

# run_check NAME EXPECT DEFINES...   EXPECT: pass (no error, complete) or fail
run_check() {
  name=$1 expect=$2
  shift 2
  dir="$work/$name"
  mkdir -p "$dir"
  cp "$work/team.pml" "$dir/"
  if ! (cd "$dir" && "$SPIN" -a "$@" team.pml >spin.log 2>&1); then
    echo "FAIL  $name: spin -a $*" >&2
    cat "$dir/spin.log" >&2
    fail
    return
  fi
  # A mutation is caught within about a million states (2 s at -O0), while
  # compiling pan takes 4 s at -O2 and 0.6 s at -O0: -O2 only for the
  # complete searches.
  opt=-O2
  [ "$expect" = fail ] && opt=-O0
  if ! (cd "$dir" && "$CC" $opt -w -DSAFETY -DCOLLAPSE -DMEMLIM="$memlim" \
          -o pan pan.c >cc.log 2>&1); then
    echo "FAIL  $name: compiling pan" >&2
    cat "$dir/cc.log" >&2
    fail
    return
  fi
  start=$(date +%s)
  (cd "$dir" && ./pan -m400000 >pan.log 2>&1)
  secs=$(($(date +%s) - start))
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | tail -n 1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | tail -n 1)
  incomplete=
  grep -q -e 'reached -DMEMLIM bound' -e 'max search depth too small' \
    -e 'out of memory' "$dir/pan.log" && incomplete=yes
  what=$(grep -m 1 -e 'assertion violated' -e 'invalid end state' \
           -e 'acceptance cycle' "$dir/pan.log" | sed 's/^pan:[0-9]*: *//')
  if [ -z "$errors" ]; then
    echo "FAIL  $name: pan did not finish" >&2
    tail -n 20 "$dir/pan.log" >&2
    fail
  elif [ "$expect" = pass ]; then
    if [ "$errors" != 0 ]; then
      echo "FAIL  $name ($*): $what, $states states" >&2
      # The counterexample, for the log.
      (cd "$dir" && "$SPIN" -t -p "$@" team.pml 2>&1 | tail -n 60) >&2
      fail
    elif [ -n "$incomplete" ]; then
      echo "FAIL  $name ($*): search incomplete after $states states" >&2
      fail
    else
      echo "ok    $name: $states states, no errors (${secs}s)"
    fi
  else
    if [ "$errors" = 0 ]; then
      echo "FAIL  $name ($*): the mutation was not caught ($states states)" >&2
      fail
    else
      echo "ok    $name: mutation caught after $states states: $what"
    fi
  fi
}

# The protocol in sleep mode (TEAMS_IDLE=sleep), every kind of region:
#   2w-3r   2 workers, one host thread, 3 regions in a row (stale joins,
#           resets keeping `active`, the free-running `left` reset before it
#           overflows, sleepers of one region needed by the next);
#   2w-2h   2 workers, two host threads competing (the loser runs serially);
#   2w-2hw  the same with TEAMS_BUSY=wait (the loser waits for the team);
#   3w-1r   3 workers, one region;
#   2w-g8   greedy regions of 8 chunks: claims of 2 chunks, then of 1.
# Shutdown runs concurrently with the host threads in all of them.
check sleep-2w-3r pass -DNW=2 -DNH=1 -DNREG=3
check sleep-2w-2h pass -DNW=2 -DNH=2 -DNREG=1
check sleep-2w-2hw pass -DNW=2 -DNH=2 -DNREG=1 -DBUSY_WAIT
check sleep-3w-1r pass -DNW=3 -DNH=1 -DNREG=1
check sleep-2w-g8 pass -DNW=2 -DNH=1 -DNREG=2 -DM=8 -DMODES=2

# Sentinel mode (TEAMS_IDLE=sentinel).  Its state space is larger (the
# sentinel keeps running while the others sleep), so longer runs are of
# static regions only, the ones that wait for every worker they name.
#
# -DNO_CLAIM: every static region is a first-touch one (TT__MODE_STATIC_PLACED:
# the holder claims no late participant's chunk and waits for every worker,
# protocol 10; the worker still claims its own).  These four, the
# sentinel's mutants, and for their size ways-2w-2hw and
# ways-sentinel-2w-2r-static, run so: a wake-up the sentinel loses hangs such a
# region, where the holder would run a claimable region's chunk itself and
# the mutant go unseen; and the claims, which touch none of the sentinel's
# words, would multiply their state spaces by 2.5-4 (sentinel-3w-1r-static:
# 135M states, 6.3 GB, past the bound).  sentinel-wrap-2w-2r-static, the
# tree's sentinel configurations and the others run with the claims.
nc=-DNO_CLAIM
check sentinel-2w-2r pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 $nc
check sentinel-2w-3r-static pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=3 -DMODES=1 $nc
check sentinel-2w-2h-static pass -DSENTINEL_MODE -DNW=2 -DNH=2 -DNREG=1 -DMODES=1 $nc
check sentinel-3w-1r-static pass -DSENTINEL_MODE -DNW=3 -DNH=1 -DNREG=1 -DMODES=1 $nc

# The generation wrap (GENMOD 2^29 in fork.c): with GENMOD 4 a resync
# precedes every region (generation 3 only), with 5 every other one; the
# resyncs alternate between generations 1 and 2.
check wrap-2w-3r-g4 pass -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4
check wrap-2w-3r-g5 pass -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=5
check sentinel-wrap-2w-2r-static pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 -DGENMOD=4 -DMODES=1

# The ways (launcher/way.c): beside team regions, a host may also run its
# region serial, on the caller alone without taking the team, or openmp,
# lent to OpenMP (take, publish nothing, release).
check ways-2w-3r pass -DWAYS -DNW=2 -DNH=1 -DNREG=3
check ways-2w-2h pass -DWAYS -DNW=2 -DNH=2 -DNREG=1
check ways-2w-2hw pass -DWAYS -DNW=2 -DNH=2 -DNREG=1 -DBUSY_WAIT $nc
check ways-sentinel-2w-2r-static pass -DWAYS -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 -DMODES=1 $nc
check mutant-MUT_LEND_KEEPS_OWNER fail -DWAYS -DMUT_LEND_KEEPS_OWNER -DNW=2 -DNH=1 -DNREG=2

# -DSIT_OUT: each team region wakes its sleepers or leaves them out (way.c's
# choice, nondeterministic here): a sleeper left out keeps its word, the
# holder runs its static chunk, and its next publisher still wakes it (10).
#   MUT_SIT_OUT_LOST      the holder does not run a sleeper's chunk
#   MUT_SIT_OUT_EXCHANGE  the sleeper's word is published without a wake:
#                         its chunk runs twice, or it sleeps through the next
#   MUT_SIT_OUT_COUNTED   the static region waits for the sleeper's report
check sitout-2w-2r pass -DSIT_OUT -DNW=2 -DNH=1 -DNREG=2
check sitout-3w-1r pass -DSIT_OUT -DNW=3 -DNH=1 -DNREG=1
for mut in MUT_SIT_OUT_LOST MUT_SIT_OUT_EXCHANGE MUT_SIT_OUT_COUNTED; do
  check "mutant-$mut" fail -DSIT_OUT -D$mut -DNW=2 -DNH=1 -DNREG=3
done

# Mutations that must be caught, each a one-line change of launcher/team.pml:
#   MUT_LOAD_SLEEP        the worker loads its go word and stores SLEEP
#                         instead of the CAS (protocol 9)
#   MUT_STORE_GO          the holder loads the go word and stores it instead
#                         of the exchange (3, 9)
#   MUT_RESET_ACTIVE      the reset of region.sync clears `active` (12)
#   MUT_JOIN_NOCHECK      a join is kept on a closed or newer region (11)
#   MUT_NO_CLOSE          the holder loads `active` instead of closing the
#                         region with fetch_or (11)
#   MUT_NO_FUTEX_RECHECK  futex_wait sleeps without comparing the word (9)
#   MUT_NO_LEFT_RESET     no sync_reset(false) before `left` overflows (10)
#   MUT_KEEP_OWNER        a host that finds the team shut down forgets to
#                         release it (15)
#   MUT_LEND_KEEPS_OWNER  a lent region forgets to release it (43; above)
#   MUT_NO_RESYNC         the generations wrap with no resync (17)
#   MUT_SENTINEL_NOPOLL   the sentinel does not watch wake_seq (21)
#   MUT_SENTINEL_NOENTRYSCAN  a new sentinel does not scan after its first
#                         read of wake_seq: a wake-up left just before is
#                         lost until it resigns (21)
#   the tree's, below     MUT_TREE_NO_WAKE, _WRONG_COUNTER, _NO_CHILD_WAIT,
#                         _LATE_RESET, _STALE_FORWARD (39-41)
#   the late participant's chunk (10), every one a static region's:
#   MUT_CLAIM_NOCAS       the worker claims its chunk with a load and a
#                         store, not the CAS: a chunk run twice
#   MUT_LATE_RUNS_CLAIMED a late worker runs the chunk its word says the
#                         holder claimed: a chunk run twice
#   MUT_CLAIM_LOST        the holder claims a chunk and does not run it: a
#                         chunk lost
#   MUT_CLAIM_EARLY_END   the holder does not wait for a chunk its worker
#                         claimed: the region ends before it is done
#   MUT_CLAIM_RESYNC      the holder claims in a resync too: a worker that
#                         did not see the resync's word misses a region
# MUT_SENTINEL_NOSCAN (no scan after resigning) is not caught once the entry
# scan exists: such a wake-up is late, not lost.  MUT_SAME_RESYNC (every
# resync takes one generation, 18) is not caught since the static chunks'
# claim: a worker's last word after a static region, a resync's included,
# carries CLAIM, which no word handed to it has, so no resync equals it.
for mut in MUT_LOAD_SLEEP MUT_STORE_GO MUT_RESET_ACTIVE MUT_JOIN_NOCHECK \
           MUT_NO_CLOSE MUT_NO_FUTEX_RECHECK MUT_NO_LEFT_RESET MUT_KEEP_OWNER \
           MUT_CLAIM_NOCAS MUT_LATE_RUNS_CLAIMED MUT_CLAIM_LOST MUT_CLAIM_EARLY_END; do
  check "mutant-$mut" fail -D$mut -DNW=2 -DNH=1 -DNREG=3
done
check mutant-MUT_NO_RESYNC fail -DMUT_NO_RESYNC -DNW=2 -DNH=1 -DNREG=4 -DGENMOD=4
check mutant-MUT_CLAIM_RESYNC fail -DMUT_CLAIM_RESYNC -DNW=2 -DNH=1 -DNREG=4 -DGENMOD=4
for mut in MUT_SENTINEL_NOPOLL MUT_SENTINEL_NOENTRYSCAN; do
  check "mutant-$mut" fail -DSENTINEL_MODE -D$mut -DNW=2 -DNH=1 -DNREG=3 -DMODES=1 $nc
done

# The tree (TEAMS_TREE_MIN, TEAMS_TREE_K): regions of TREE_MIN participants
# or more are handed on along a tree of branching TREE_K, the smaller ones
# flat, so the runs mix both.  With 2 workers and branching 1, a region of 3
# is a chain: the holder hands it to leader 1, which hands it to its member
# 2 (sleeping leaders and members, the tree join through `done`, greedy and
# each regions handed on under a join); with 3 workers and branching 2, a
# region of 4 has leader 1 with member 2 and a second group, 3.
tree="-DTREE_MIN=3 -DTREE_K=1"
check tree-2w-3r-k1 pass -DNW=2 -DNH=1 -DNREG=3 $tree
check tree-2w-2h-k1 pass -DNW=2 -DNH=2 -DNREG=1 $tree
check tree-2w-2hw-k1 pass -DNW=2 -DNH=2 -DNREG=1 -DBUSY_WAIT $tree
check tree-3w-1r-k2 pass -DNW=3 -DNH=1 -DNREG=1 -DTREE_MIN=4 -DTREE_K=2
check tree-sentinel-2w-2r-static-k1 pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 -DMODES=1 $tree
check tree-wrap-2w-3r-g4-k1 pass -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4 $tree
check tree-sentinel-wrap-2w-2r-static-k1 pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 -DGENMOD=4 -DMODES=1 $tree
for mut in MUT_TREE_NO_WAKE MUT_TREE_WRONG_COUNTER MUT_TREE_NO_CHILD_WAIT \
           MUT_TREE_LATE_RESET MUT_TREE_STALE_FORWARD; do
  check "mutant-$mut" fail -D$mut -DNW=2 -DNH=1 -DNREG=3 $tree
done

wait
if [ "$jobs" -gt 1 ]; then
  for name in $names; do
    cat "$work/$name.out"
  done
fi
failures=$(ls "$work" | grep -c '\.failed$')
if [ "$failures" != 0 ]; then
  echo "model-check: $failures check(s) failed" >&2
  exit 1
fi
echo "model-check: all checks passed"
