#!/usr/bin/env bash
# The driver on the other PoCL releases it supports.  For each Debian release
# given (default: those of bookworm, trixie and forky -- PoCL 3.1, 6.0 and
# 7.1 -- that this machine is not; its own PoCL is tools/test-all.sh's), in
# a root of that release (tools/pocl-root.sh: made with debootstrap, kept in
# $TEAMS_ROOTS between runs, made anew when a week old):
#   1. tools/install-deps.sh, as a user of that release runs it, and a check
#      that the PoCL it installed is the one the release is known to bring;
#   2. a fresh build of this tree with the release preset's parts (driver,
#      tests, benchmarks; warnings are errors);
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
# apart); all, the default, does both.  Each release writes
# build-ci/logs/pocl-<release>[-alone].log and prints one line; exit status
# 1 when any failed.  JOBS sets the build's and ctest's -j.
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
  host=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  for r in bookworm trixie forky; do [[ $r == "$host" ]] || releases+=("$r"); done
fi
jobs=${JOBS:-$(nproc)}
logs=build-ci/logs
mkdir -p "$logs"

if [[ $(id -u) != 0 ]]; then
  echo "test-pocl-versions: needs root (debootstrap, chroot, mounts)" >&2
  exit 1
fi

# What runs inside the root (as root, the tree at /src, read-only):
# inside_suite WANT JOBS, inside_alone JOBS.
quiet='^test-team(-tree)?$'
inside_suite=$(
  cat <<SH
set -euo pipefail
want=\$1 jobs=\$2
bash /src/tools/install-deps.sh
have=\$(dpkg-query -W -f='\${Version}' libpocl2t64 2>/dev/null || dpkg-query -W -f='\${Version}' libpocl2)
case \$have in
  "\$want"*) echo "root: PoCL \$have" ;;
  *) echo "root: PoCL \$have, but this release is known for \$want: update tools/pocl-root.sh" >&2
     exit 1 ;;
esac
rm -rf /build
cmake -S /src -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON \\
  -DTT_BUILD_TESTS=ON -DTT_BUILD_POCL=ON -DTT_BUILD_BENCH=ON -DTT_MODEL_CHECK=OFF
cmake --build /build -j"\$jobs"
ctest --test-dir /build --no-tests=error --output-on-failure -j"\$jobs" -E '$quiet' --timeout 900
SH
)
inside_alone="ctest --test-dir /build --no-tests=error --output-on-failure -R '$quiet' --timeout 900"

failed=()
for rel in "${releases[@]}"; do
  want=$(pocl_root_expect "$rel") || {
    echo "=== pocl-$rel: FAILED (unknown release; known: trixie forky)"
    failed+=("$rel")
    continue
  }
  for step in suite alone; do
    [[ $phase == all || $phase == "$step" ]] || continue
    start=$SECONDS
    name=pocl-$rel
    [[ $step == alone ]] && name=$name-alone
    log=$logs/$name.log
    if [[ $step == suite ]]; then
      {
        root=$(pocl_root_make "$rel") &&
          pocl_root_run "$root" "$src" bash -c "$inside_suite" inside "$want" "$jobs"
      } >"$log" 2>&1
    else
      root=$TEAMS_ROOTS/$rel
      if [[ -d $root/build ]]; then
        pocl_root_run "$root" "$src" bash -c "$inside_alone" >"$log" 2>&1
      else
        echo "no build in $root: run the suite phase first" >"$log"
        false
      fi
    fi
    if (($? == 0)); then
      echo "=== $name (PoCL $want): passed ($((SECONDS - start)) s)"
    else
      echo "=== $name (PoCL $want): FAILED ($((SECONDS - start)) s); the end of $log:"
      tail -n 60 "$log"
      failed+=("$name")
    fi
  done
done
((${#failed[@]} == 0))
