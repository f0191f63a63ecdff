#!/usr/bin/env bash
# teams against each PoCL's own drivers, on every PoCL release the driver
# supports, in one sitting: this machine's PoCL and the others' Debian roots
# (tools/pocl-root.sh, as tools/test-pocl-versions.sh makes them).  For each
# release, in its own build, brought up to date first (this machine:
# build-ci/release; a root: /build-bench, apart from the tests' /build):
#   - teams-bench-cl --tsv: teams against that PoCL's cpu and cpu-minimal
#     drivers (cl-launch, cl-sync, cl-axpy, cl-tri, cl-first, cl-gap: the
#     host's own work between launches, teams' default and each fixed
#     TEAMS_RUN, and cl-blas where CLBlast is packaged), each round
#     alternating the systems; its notes (cl-gap's trip counts) in
#     <release>-cl.notes;
#   - clpeak (Debian's, where installed): kernel launch latency, single
#     float compute and global bandwidth, on teams (through teams-run), cpu
#     and cpu-minimal, ROUNDS rounds alternating the three.
# Then tools/pocl-versions-report.py makes one table of the releases
# (medians, ratios to each release's cpu and cpu-minimal) and a plot, and
# per release the table of cl-gap's cells and its plot.
#
#   tools/bench-pocl-versions.sh [--quick] [--rounds N] [--out DIR]
#                                [--section NAME] [RELEASE...]
# --section NAME: teams-bench-cl's one section (e.g. cl-gap), no clpeak.
# RELEASE: bookworm, trixie, forky, or `host` (this machine's own PoCL);
# default: host and the two of bookworm, trixie and forky it is not.
# Writes DIR (default build-ci/bench-pocl-versions): <release>-cl.tsv,
# <release>-cl.notes, <release>-clpeak.txt, report.md, versions.svg,
# gap-<release>.svg.  Root only (the roots).
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
. tools/pocl-root.sh
quick=""
section=""
rounds=5
out=build-ci/bench-pocl-versions
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=--quick; rounds=2 ;;
    --rounds) rounds=$2; shift ;;
    --out) out=$2; shift ;;
    --section) section=$2; shift ;;
    -*) echo "bench-pocl-versions: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
releases=("$@")
host=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if ((${#releases[@]} == 0)); then
  releases=(host)
  for r in $(pocl_root_releases); do [[ $r == "$host" ]] || releases+=("$r"); done
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# What runs in a build: BUILD OUT NAME ROUNDS QUICK.  clpeak's systems run
# round by round in turn; each run's stdout is kept.
measure=$(
  cat <<'SH'
set -uo pipefail
build=$1 out=$2 name=$3 rounds=$4 quick=$5 section=$6
"$build/bench/teams-bench-cl" --tsv $quick ${section:+--section "$section"} > "$out/$name-cl.tsv" \
  2> "$out/$name-cl.notes" ||
  { cat "$out/$name-cl.notes" >&2; echo "teams-bench-cl failed" >&2; exit 1; }
if [ -n "$section" ]; then
  echo "one section ($section): clpeak left out" > "$out/$name-clpeak.txt"
elif command -v clpeak > /dev/null; then
  : > "$out/$name-clpeak.txt"
  for r in $(seq 1 "$rounds"); do
    for sys in teams cpu cpu-minimal; do
      case $sys in
        teams) cmd=("$build/tools/teams-run" clpeak) ;;
        cpu) cmd=(env POCL_DEVICES=pthread clpeak) ;;
        cpu-minimal) cmd=(env POCL_DEVICES=basic clpeak) ;;
      esac
      echo "### $sys round $r" >> "$out/$name-clpeak.txt"
      for t in --kernel-latency --compute-sp --global-bandwidth; do
        POCL_CACHE_DIR="$build/pocl-cache/clpeak-$sys" timeout 600 "${cmd[@]}" $t \
          >> "$out/$name-clpeak.txt" 2>/dev/null
      done
    done
  done
else
  echo "clpeak not installed: its rows left out" > "$out/$name-clpeak.txt"
fi
SH
)

status=0
for rel in "${releases[@]}"; do
  start=$SECONDS
  if [[ $rel == host || $rel == "$host" ]]; then
    name=${host:-host}
    # always brought up to date: a build left from an older tree would
    # measure that tree
    { [[ -f build-ci/release/CMakeCache.txt ]] || cmake --preset release; } > "$out/$name-build.log" 2>&1 &&
      cmake --build build-ci/release -j"$(nproc)" >> "$out/$name-build.log" 2>&1 || {
      echo "=== $name: build failed ($out/$name-build.log)"; status=1; continue; }
    bash -c "$measure" measure "$src/build-ci/release" "$out" "$name" "$rounds" "$quick" "$section"
  else
    name=$rel
    root=$(pocl_root_make "$rel") || { echo "=== $name: no root"; status=1; continue; }
    mkdir -p "$root/bench-out"
    pocl_root_run "$root" "$src" bash -c '
      set -e
      bash /src/tools/install-deps.sh > /dev/null
      if [ ! -f /build-bench/CMakeCache.txt ]; then
        cmake -S /src -B /build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_BUILD_TESTS=ON \
          -DTT_BUILD_POCL=ON -DTT_BUILD_BENCH=ON -DTT_MODEL_CHECK=OFF > /dev/null
      fi
      cmake --build /build-bench -j"$(nproc)" > /dev/null
      bash -c "$1" measure /build-bench /bench-out "$2" "$3" "$4" "$5"' \
      bench "$measure" "$name" "$rounds" "$quick" "$section"
    rc=$?
    cp "$root/bench-out/$name"-* "$out/" 2>/dev/null
    ((rc == 0)) || { echo "=== $name: FAILED"; status=1; continue; }
  fi
  echo "=== $name: measured ($((SECONDS - start)) s)"
done
python3 tools/pocl-versions-report.py "$out" || status=1
exit $status
