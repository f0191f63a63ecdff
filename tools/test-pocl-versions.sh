#!/usr/bin/env bash
# The driver on every PoCL release it supports, each on a freshly made system
# of its Debian release, this machine's own included.  For each release
# given (default: bookworm, trixie and forky -- PoCL 3.1, 6.0 and 7.1), in a
# root of that release (tools/pocl-root.sh: made with debootstrap, kept in
# $TEAMS_ROOTS between runs, made anew when a week old):
#   1. the README's first command, as a user runs it on a fresh system of
#      that release: `bash tools/install-deps.sh && bash tools/demo.sh` in
#      /work/teams, a writable copy of this tree (the files git tracks and
#      the untracked ones it does not ignore; no build), made anew each run:
#      the tree itself is read-only in the root, and demo.sh builds in
#      build/ of its tree.  Its build is its own, from nothing, with
#      demo.sh's options: the suite's (2.) has others (-Werror, the
#      tests' parts), so neither can stand in for the other.
#   2. a check that the PoCL install-deps installed is the one the release
#      is known to bring, and a fresh build of this tree in /build with the
#      release preset's parts (driver, tests, benchmarks; warnings are
#      errors);
#   3. every ctest suite of that build -- the driver's suites, PoCL's own
#      test programs of that release on teams against its cpu driver
#      (pocl-tests), teams-run clinfo -l, PyOpenCL's kernel with local
#      memory, the Debian packages (package-debs) -- but the model check,
#      which checks launcher/team.pml whatever the PoCL (tools/test-all.sh
#      runs it).
# A root that cannot be made, a package that cannot be installed, a build
# or a test that fails: the release fails, with its reason.  Root only.
#
#   tools/test-pocl-versions.sh [--phase all|suite|alone] [RELEASE...]
# --phase suite does 1-3 but the tests that watch the team's threads;
# --phase alone runs those in the builds a suite phase left, for a moment
# when nothing else loads the CPUs (tools/test-all.sh runs the two phases
# apart); all, the default, does both.  The releases' suite phases run side
# by side (most of a root's first minutes wait on the network: debootstrap,
# apt), their alone phases one after the other.  Each release writes
# build-ci/logs/pocl-<release>[-alone].log and prints one line, with the
# time of each part; exit status 1 when any failed.  JOBS sets the builds'
# and ctest's -j.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
. tools/pocl-root.sh
phase=all
if [[ ${1:-} == --phase ]]; then
  phase=${2:-}
  shift 2
fi
case $phase in all | suite | alone) ;; *)
  echo "test-pocl-versions: --phase all|suite|alone" >&2
  exit 2
  ;;
esac
releases=("$@")
if ((${#releases[@]} == 0)); then
  read -ra releases <<<"$(pocl_root_releases)"
fi
for rel in "${releases[@]}"; do
  pocl_root_expect "$rel" >/dev/null || {
    echo "test-pocl-versions: unknown release '$rel' (known: $(pocl_root_releases))" >&2
    exit 2
  }
done
jobs=${JOBS:-$(nproc)}
logs=build-ci/logs
mkdir -p "$logs"

if [[ $(id -u) != 0 ]]; then
  echo "test-pocl-versions: needs root (debootstrap, chroot, mounts)" >&2
  exit 1
fi

# What runs inside the root (as root, the tree at /src, read-only, its copy
# at /work/teams): inside_suite WANT JOBS, inside_alone JOBS.  Each part
# ends with a line "part: NAME N s" that the summary line collects.
quiet='^test-team(-tree)?$'
inside_suite=$(
  cat <<SH
set -euo pipefail
want=\$1 jobs=\$2
# The README's first command, its two halves timed apart.
cd /work/teams
t=\$SECONDS
if ! bash tools/install-deps.sh; then
  echo "root: the README's command failed in tools/install-deps.sh" >&2
  exit 1
fi
echo "part: install-deps \$((SECONDS - t)) s"
t=\$SECONDS
if ! bash tools/demo.sh; then
  echo "root: the README's command failed in tools/demo.sh" >&2
  exit 1
fi
echo "part: demo \$((SECONDS - t)) s"
have=\$(dpkg-query -W -f='\${Version}' libpocl2t64 2>/dev/null || dpkg-query -W -f='\${Version}' libpocl2)
case \$have in
  "\$want"*) echo "root: PoCL \$have" ;;
  *) echo "root: PoCL \$have, but this release is known for \$want: update tools/pocl-root.sh" >&2
     exit 1 ;;
esac
t=\$SECONDS
rm -rf /build
cmake -S /src -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON \\
  -DTT_BUILD_TESTS=ON -DTT_BUILD_POCL=ON -DTT_BUILD_BENCH=ON -DTT_MODEL_CHECK=OFF
cmake --build /build -j"\$jobs"
echo "part: build \$((SECONDS - t)) s"
t=\$SECONDS
rc=0
ctest --test-dir /build --no-tests=error --output-on-failure -j"\$jobs" -E '$quiet' --timeout 900 || rc=\$?
echo "part: suites \$((SECONDS - t)) s"
exit \$rc
SH
)
inside_alone="ctest --test-dir /build --no-tests=error --output-on-failure -R '$quiet' --timeout 900"

# copy_tree ROOT: ROOT's /work/teams made anew from this tree, as a clone
# of it would hold it: the files git tracks (as they are now) and the
# untracked ones it does not ignore; without git, the tree less .git and
# build*/ (.gitignore's builds).
copy_tree() {
  local dest=$1/work/teams
  rm -rf "$dest"
  mkdir -p "$dest"
  if command -v git >/dev/null && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -z --cached --others --exclude-standard |
      (cd "$src" && xargs -0 sh -c 'for f; do if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\0" "$f"; fi; done' sh) |
      tar -C "$src" --null -T - -cf - | tar -C "$dest" -xf -
  else
    tar -C "$src" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$dest" -xf -
  fi
}

# The parts' times a log's "part:" lines give: "root 62 s, install-deps 174 s, ...".
parts() {
  sed -n 's/^part: \([a-z-]*\) \([0-9]*\) s$/\1 \2 s/p' "$1" | paste -sd ',' | sed 's/,/, /g'
}

# suite REL: the suite phase of one release, its log in $logs/pocl-REL.log;
# one line when it ends; exit status 1 when it failed.
suite() {
  local rel=$1 want root start=$SECONDS log=$logs/pocl-$1.log t
  want=$(pocl_root_expect "$rel")
  {
    t=$SECONDS
    root=$(pocl_root_make "$rel") &&
      echo "part: root $((SECONDS - t)) s" &&
      copy_tree "$root" &&
      pocl_root_run "$root" "$src" bash -c "$inside_suite" inside "$want" "$jobs"
  } >"$log" 2>&1
  if (($? == 0)); then
    echo "=== pocl-$rel (PoCL $want): passed ($((SECONDS - start)) s: $(parts "$log"))"
  else
    echo "=== pocl-$rel (PoCL $want): FAILED ($((SECONDS - start)) s: $(parts "$log")); its failed tests' output and the end of $log:"
    awk -f tools/ctest-failed.awk "$log"
    tail -n 30 "$log"
    return 1
  fi
}

# alone REL: the alone phase of one release, in the build its suite left.
alone() {
  local rel=$1 want root=$TEAMS_ROOTS/$1 start=$SECONDS log=$logs/pocl-$1-alone.log
  want=$(pocl_root_expect "$rel")
  if [[ -d $root/build ]]; then
    pocl_root_run "$root" "$src" bash -c "$inside_alone" >"$log" 2>&1
  else
    echo "no build in $root: run the suite phase first" >"$log"
    false
  fi
  if (($? == 0)); then
    echo "=== pocl-$rel-alone (PoCL $want): passed ($((SECONDS - start)) s)"
  else
    echo "=== pocl-$rel-alone (PoCL $want): FAILED ($((SECONDS - start)) s); its failed tests' output and the end of $log:"
    awk -f tools/ctest-failed.awk "$log"
    tail -n 30 "$log"
    return 1
  fi
}

failed=()
if [[ $phase == all || $phase == suite ]]; then
  # Side by side; each one's lines go out whole as it ends (held in a
  # file until then).
  declare -A rel_of out
  for rel in "${releases[@]}"; do
    out[$rel]=$(mktemp)
    suite "$rel" >"${out[$rel]}" 2>&1 &
    rel_of[$!]=$rel
  done
  for _ in "${releases[@]}"; do
    wait -n -p done_pid
    rc=$?
    rel=${rel_of[$done_pid]}
    ((rc == 0)) || failed+=("pocl-$rel")
    cat "${out[$rel]}"
    rm -f "${out[$rel]}"
  done
fi
if [[ $phase == all || $phase == alone ]]; then
  for rel in "${releases[@]}"; do
    # A release whose suite phase failed here has no build to run them in.
    [[ " ${failed[*]} " == *" pocl-$rel "* ]] && continue
    alone "$rel" || failed+=("pocl-$rel-alone")
  done
fi
((${#failed[@]} == 0))
