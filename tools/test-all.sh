#!/usr/bin/env bash
# Build and run the whole test suite: the normal build (library, driver,
# kernels, model check, conformance), then the runtime's suite under
# ThreadSanitizer and under AddressSanitizer + UBSan: the configure presets
# release, tsan and asan of CMakePresets.json, in build-ci/<preset>.  The PoCL
# driver is not rebuilt under the sanitizers: libpocl and its JIT are not
# instrumented.  Beside them, every PoCL release the driver supports, this
# machine's own included, each on a Debian root made fresh (the README's
# first command, a build and every suite: tools/test-pocl-versions.sh;
# root only; TEAMS_POCL_RELEASES="" leaves them out, a list picks them).
# Where this machine's own release is one of those roots (a Debian 12 host
# with its PoCL 3.1), its root runs the release build's suites and the host
# does not run them a second time: it builds and runs the sanitizer presets
# and configures the release preset for the model check.
#
# Independent parts run side by side (of the 15 minutes of a sequential run,
# about 5.5 are the model check on one core, 3.5 PoCL's test programs):
#   the model check (needs the release tree configured, not built) ........ |
#   build release, its other tests (ctest -j), PoCL's test programs ........ |
#   after the release build: build tsan, its tests, build asan, its tests . |
# then, with nothing else running, the tests that watch the team's threads
# (test-team and test-team-tree: on an overcommitted machine the unused worker must be found
# asleep, which other load on the CPUs can prevent), once per build.
# Each step writes build-ci/logs/<step>.log and prints one line when it ends;
# the logs of failed steps are printed at the end.  Exits non-zero if any
# step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
werror=${TT_WERROR:-ON}
logs=build-ci/logs
rm -rf "$logs"
mkdir -p "$logs"
t0=$SECONDS

step() { # name command...: one line when it ends, output in $logs/<name>.log
  local name=$1 start=$SECONDS
  shift
  if "$@" >"$logs/$name.log" 2>&1; then
    echo "=== $name: passed ($((SECONDS - start)) s)"
  else
    echo "=== $name: FAILED ($((SECONDS - start)) s)"
    echo "$name" >>"$logs/failed"
    return 1
  fi
}
configure() { cmake --preset "$1" -DTT_WERROR="$werror"; }
build() { cmake --build --preset "$1" -j"$jobs"; }
check() { ctest --preset "$1" --no-tests=error "${@:2}"; }

# Every ctest run's closing line summed: "suite: P passed, F failed".
summary() {
  cat "$logs"/*.log 2>/dev/null |
    sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' |
    awk '{f += $1; n += $2} END {printf "suite: %d passed, %d failed\n", n - f, f}'
}

finish() {
  summary
  if [[ -s $logs/failed ]]; then
    while read -r name; do
      echo
      echo "=== $name failed; its failed tests' output and the end of $logs/$name.log:"
      awk -f tools/ctest-failed.awk "$logs/$name.log"
      tail -n 100 "$logs/$name.log"
    done <"$logs/failed"
    echo
    echo "=== FAILED: $(paste -sd ' ' "$logs/failed") ($((SECONDS - t0)) s)"
    exit 1
  fi
  echo "=== all suites passed ($((SECONDS - t0)) s)"
}

# Every tool a step will call, checked before the first step: a missing one
# stops the run at once, naming its package (tools/install-deps.sh installs
# them all), instead of failing a step a quarter of an hour in.
missing=()
need() { command -v "$1" >/dev/null || missing+=("$1 (package $2)"); }
need cmake cmake
need ctest cmake
need cc build-essential
need c++ build-essential
need clang clang
need pkg-config pkg-config
need spin spin
need python3 python3
need clinfo clinfo
need xz xz-utils
need dpkg-shlibdeps dpkg-dev
need file file
if [[ ${TEAMS_POCL_RELEASES-unset} == unset || -n ${TEAMS_POCL_RELEASES-} ]]; then
  need debootstrap debootstrap
  need unshare util-linux
  need chroot coreutils
  need mount mount
  if [[ $(id -u) != 0 ]]; then
    echo "test-all: the PoCL releases' roots need root (or TEAMS_POCL_RELEASES=\"\")" >&2
    exit 1
  fi
fi
if ((${#missing[@]})); then
  printf 'test-all: not found: %s\n' "${missing[@]}" >&2
  echo "test-all: run tools/install-deps.sh as root first" >&2
  exit 1
fi

# The model check is the longest step; after the sanitizer suites it runs
# alone, so two of its searches at a time use the second core (largest
# search 2.6 GB).
export MODEL_JOBS=${MODEL_JOBS:-2}
quiet='^test-team(-tree)?$'   # run alone, at the end (and its tree variant)
mkdir -p build-ci
step configure-release configure release &&
  step configure-tsan configure tsan &&
  step configure-asan configure asan || finish

step model-check check release -R '^model-check$' &

# The PoCL releases' roots, side by side: their debootstrap and packages
# wait on the network, their builds and suites share the CPUs with the rest.
if [[ ${TEAMS_POCL_RELEASES-unset} == unset ]]; then
  releases=()
else
  read -ra releases <<<"$TEAMS_POCL_RELEASES"
fi
versions=0
if [[ ${TEAMS_POCL_RELEASES-unset} == unset || ${#releases[@]} -gt 0 ]]; then
  versions=1
  step pocl-versions bash tools/test-pocl-versions.sh --phase suite "${releases[@]}" &
fi

# This machine's own release, where its root runs: that root builds the same
# tree with the same compiler and PoCL and runs every release suite on a
# system made fresh, so the host runs only what no root does (the model
# check, the sanitizer builds) rather than the same suites twice.
host_rel=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
host_pocl=$(dpkg-query -W -f='${Version}' libpocl2t64 2>/dev/null ||
  dpkg-query -W -f='${Version}' libpocl2 2>/dev/null)
in_root=0
if ((versions)) && [[ -n $host_rel && -n $host_pocl ]]; then
  . tools/pocl-root.sh
  want=$(pocl_root_expect "$host_rel") && [[ $host_pocl == "$want"* ]] &&
    { ((${#releases[@]} == 0)) || [[ " ${releases[*]} " == *" $host_rel "* ]]; } &&
    in_root=1
fi

built=()
if ((in_root)); then
  echo "=== release: its suites run in the $host_rel root (PoCL $host_pocl, the same as here)"
elif step build-release build release; then
  built+=(release)
  step test-release check release -j"$jobs" -E "^(model-check|pocl-tests)\$|$quiet"
  step pocl-tests check release -R '^pocl-tests$' &
fi
for preset in tsan asan; do
  step "build-$preset" build "$preset" && built+=("$preset") &&
    step "test-$preset" check "$preset" -j"$jobs" -E "$quiet"
done
wait
for preset in "${built[@]}"; do
  step "test-$preset-alone" check "$preset" -R "$quiet"
done
if ((versions)) && ! grep -qx pocl-versions "$logs/failed" 2>/dev/null; then
  step pocl-versions-alone bash tools/test-pocl-versions.sh --phase alone "${releases[@]}"
fi
finish
