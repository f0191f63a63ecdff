#!/bin/bash
# Scaling rows for a machine with more cores than a laptop: what a report
# about the team on a new machine needs, in one run (a few minutes).
#
#   bench/scaling.sh [BUILD] [OUTDIR]      (defaults: build, .)
#
# Writes OUTDIR/scaling.txt (everything, in order) and OUTDIR/*.tsv:
#   machine    CPUs, caches, NUMA nodes (lscpu, lstopo when installed,
#              teams-info: the team's size, CPUs and steal tiers)
#   bench      the whole teams-bench (every section, default rounds)
#   by-p       the empty and axpy sections at p = 2, 4, 8, ... CPUs:
#              fork/join cost (flat protocol, `teams`, against the tree,
#              `teams-tree`, and the OpenMP runtimes and oneTBB) and
#              bandwidth as the team grows
#   interop    OpenMP and team regions alternating in one process, at p
#   deal       where the team pinned over its NUMA nodes (TEAMS_PIN=numa)
#              deals a range's blocks over several nodes or LLCs (teams-info
#              says so): the grid and axpy sections pinned, dealt against
#              TEAMS_BLOCKS=contiguous (block c on participant c), alternating
#   line-scan  the scan-overlap constant of tools/teams-sim's cost model
#   sim        teams-sim's fork/join critical path at the measured p, to
#              set beside the empty rows
# Nothing here judges a number: it prints them.  Each part runs under a
# timeout so that one stuck part cannot take the others' time.
set -u
B=${1:-build}
O=${2:-.}
mkdir -p "$O"
exec > >(tee "$O/scaling.txt") 2>&1

part() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
run() { local t=$1; shift; timeout "$t" "$@"; local rc=$?
        [ $rc -eq 0 ] || echo "(exit $rc: $*)"; }

P=$(nproc)
part machine
uname -srm
echo "nproc $P"
lscpu 2>/dev/null | grep -E '^(Model name|Socket|Core|Thread|NUMA|L[123])'
grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status
[ -r /sys/fs/cgroup/cpu.max ] && echo "cpu.max $(cat /sys/fs/cgroup/cpu.max)"
command -v lstopo-no-graphics >/dev/null &&
  run 20 lstopo-no-graphics --no-io --of console
run 20 "$B/tools/teams-info"
echo "uptime: $(uptime)"

part bench: teams-bench, every section
run 400 "$B/bench/teams-bench" --tsv | tee "$O/bench.tsv" |
  awk -F'\t' '{printf "%-8s %-20s %-24s %-6s %10s %10s %s\n", $1, $2, $3, $4, $5, $6, $7}'

ps=""
for ((p = 2; p < P; p *= 2)); do ps="$ps $p"; done
ps="$ps $P"
part "by-p: empty and axpy sections at p =$ps"
: > "$O/by-p.tsv"
for p in $ps; do
  for s in empty axpy; do
    run 120 "$B/bench/teams-bench" --quick --tsv --section $s --threads "$p" |
      sed "s/^/p=$p\t/" | tee -a "$O/by-p.tsv" |
      awk -F'\t' '$4 ~ /^(static_m=p|greedy_m=64|triad_bw|axpy_bw)$/ {
        printf "%-6s %-8s %-20s %-14s %-6s %10s %10s %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
  done
done

part "interop: OpenMP and team regions alternating (p = $P)"
run 300 "$B/bench/teams-bench" --tsv --section interop | tee "$O/interop.tsv" |
  awk -F'\t' '{printf "%-8s %-20s %-24s %-6s %10s %10s %s\n", $1, $2, $3, $4, $5, $6, $7}'

part "deal: grid and axpy pinned over the nodes, dealt vs contiguous blocks"
if TEAMS_PIN=numa timeout 20 "$B/tools/teams-info" | grep -q '^blocks of a range: dealt'; then
  TEAMS_PIN=numa run 20 "$B/tools/teams-info" | grep -E '^ +[0-9]+: PU|^blocks'
  : > "$O/deal.tsv"
  for round in 1 2; do
    for blocks in dealt contiguous; do
      for s in grid axpy; do
        TEAMS_PIN=numa TEAMS_BLOCKS=$blocks run 300 "$B/bench/teams-bench" \
          --tsv --section $s | sed "s/^/$blocks\t/" | tee -a "$O/deal.tsv" |
          awk -F'\t' '$3 ~ /^teams/ && $4 ~ /(triangular|imbalanced|axpy_uniform|triad_bw|axpy_bw)$/ {
            printf "%-10s %-8s %-20s %-24s %10s\n", $1, $2, $3, $4, $6 }'
      done
    done
  done
else
  echo "one node and one LLC (or not pinned): block c on participant c, nothing to compare"
fi

part line-scan
run 30 "$B/bench/teams-bench-line-scan" 256 2001

part "sim: fork/join critical path"
run 60 "$B/tools/teams-sim" --p "$P" | sed -n '/^fork\/join/,$p'

part done
