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
# Environment: SPIN (spin), CC (cc), MODEL_MEMLIM_MB (4096).
set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/../launcher/team.pml}
SPIN=${SPIN:-spin}
CC=${CC:-cc}
memlim=${MODEL_MEMLIM_MB:-4096}

[ -r "$model" ] || { echo "model-check: no model at $model" >&2; exit 2; }
command -v "$SPIN" >/dev/null 2>&1 || { echo "model-check: $SPIN not found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/teams-model.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/team.pml"
failures=0

# check NAME EXPECT DEFINES...   EXPECT: pass (no error, complete) or fail
check() {
  name=$1 expect=$2
  shift 2
  dir="$work/$name"
  mkdir -p "$dir"
  cp "$work/team.pml" "$dir/"
  if ! (cd "$dir" && "$SPIN" -a "$@" team.pml >spin.log 2>&1); then
    echo "FAIL  $name: spin -a $*" >&2
    cat "$dir/spin.log" >&2
    failures=$((failures + 1))
    return
  fi
  if ! (cd "$dir" && "$CC" -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM="$memlim" \
          -o pan pan.c >cc.log 2>&1); then
    echo "FAIL  $name: compiling pan" >&2
    cat "$dir/cc.log" >&2
    failures=$((failures + 1))
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
    failures=$((failures + 1))
  elif [ "$expect" = pass ]; then
    if [ "$errors" != 0 ]; then
      echo "FAIL  $name ($*): $what, $states states" >&2
      # The counterexample, for the log.
      (cd "$dir" && "$SPIN" -t -p "$@" team.pml 2>&1 | tail -n 60) >&2
      failures=$((failures + 1))
    elif [ -n "$incomplete" ]; then
      echo "FAIL  $name ($*): search incomplete after $states states" >&2
      failures=$((failures + 1))
    else
      echo "ok    $name: $states states, no errors (${secs}s)"
    fi
  else
    if [ "$errors" = 0 ]; then
      echo "FAIL  $name ($*): the mutation was not caught ($states states)" >&2
      failures=$((failures + 1))
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
check sentinel-2w-2r pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2
check sentinel-2w-3r-static pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=3 -DMODES=1
check sentinel-2w-2h-static pass -DSENTINEL_MODE -DNW=2 -DNH=2 -DNREG=1 -DMODES=1
check sentinel-3w-1r-static pass -DSENTINEL_MODE -DNW=3 -DNH=1 -DNREG=1 -DMODES=1

# The generation wrap (GENMOD 2^30 in team.c): with GENMOD 4 a resync
# precedes every region (generation 3 only), with 5 every other one; the
# resyncs alternate between generations 1 and 2.
check wrap-2w-3r-g4 pass -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4
check wrap-2w-3r-g5 pass -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=5
check sentinel-wrap-2w-2r-static pass -DSENTINEL_MODE -DNW=2 -DNH=1 -DNREG=2 -DGENMOD=4 -DMODES=1

# Polite mode (launcher/team.c, "Sharing the CPUs"): the holder may leave
# any worker out of a region (-DLEAVE_OUT: a nondeterministic choice per
# worker), never out of a resync; a static region's chunk of a left-out
# worker runs on the holder.
check leave-2w-2r pass -DLEAVE_OUT -DNW=2 -DNH=1 -DNREG=2
check leave-2w-2h pass -DLEAVE_OUT -DNW=2 -DNH=2 -DNREG=1
check leave-3w-1r pass -DLEAVE_OUT -DNW=3 -DNH=1 -DNREG=1
check leave-wrap-2w-3r-g4-static pass -DLEAVE_OUT -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4 -DMODES=1
check mutant-MUT_LEFT_OUT_COUNTED fail -DLEAVE_OUT -DMUT_LEFT_OUT_COUNTED -DNW=2 -DNH=1 -DNREG=2
check mutant-MUT_LEFT_OUT_NOCHUNK fail -DLEAVE_OUT -DMUT_LEFT_OUT_NOCHUNK -DNW=2 -DNH=1 -DNREG=2
check mutant-MUT_RESYNC_LEAVES_OUT fail -DLEAVE_OUT -DMUT_RESYNC_LEAVES_OUT -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4 -DMODES=1

# Mutations that must be caught.
for mut in MUT_LOAD_SLEEP MUT_STORE_GO MUT_RESET_ACTIVE MUT_JOIN_NOCHECK \
           MUT_NO_CLOSE MUT_NO_FUTEX_RECHECK MUT_NO_LEFT_RESET MUT_KEEP_OWNER; do
  check "mutant-$mut" fail -D$mut -DNW=2 -DNH=1 -DNREG=3
done
check mutant-MUT_SAME_RESYNC fail -DMUT_SAME_RESYNC -DNW=2 -DNH=1 -DNREG=3 -DGENMOD=4
check mutant-MUT_NO_RESYNC fail -DMUT_NO_RESYNC -DNW=2 -DNH=1 -DNREG=4 -DGENMOD=4
for mut in MUT_SENTINEL_NOPOLL MUT_SENTINEL_NOENTRYSCAN; do
  check "mutant-$mut" fail -DSENTINEL_MODE -D$mut -DNW=2 -DNH=1 -DNREG=3 -DMODES=1
done

if [ "$failures" != 0 ]; then
  echo "model-check: $failures check(s) failed" >&2
  exit 1
fi
echo "model-check: all checks passed"
