#!/usr/bin/env bash
# Build and run the whole test suite: the normal build (library, driver,
# kernels, model check, conformance), then the runtime's suite under
# ThreadSanitizer and under AddressSanitizer + UBSan.  The PoCL driver is
# not rebuilt under the sanitizers: libpocl and its JIT are not instrumented.
# Exits non-zero on the first failing build or test run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
werror=${TT_WERROR:-ON}

run_suite() { # build-dir, extra cmake args...
  local dir=$1; shift
  echo "=== $dir: configure $*"
  cmake -S . -B "$dir" -DTT_WERROR="$werror" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  echo "=== $dir: build"
  cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1 ||
    { tail -n 60 "$dir.build.log"; return 1; }
  echo "=== $dir: test"
  (cd "$dir" && ctest --output-on-failure --timeout 900)
}

mkdir -p build-ci
run_suite build-ci/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_suite build-ci/tsan -DTT_SANITIZE=thread -DTT_BUILD_POCL=OFF -DTT_BUILD_BENCH=OFF
run_suite build-ci/asan -DTT_SANITIZE=address -DTT_BUILD_POCL=OFF -DTT_BUILD_BENCH=OFF
echo "=== all suites passed"
