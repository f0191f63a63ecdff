#!/usr/bin/env bash
# Build and run the whole test suite: the normal build (library, driver,
# kernels, model check, conformance), then the runtime's suite under
# ThreadSanitizer and under AddressSanitizer + UBSan: the configure presets
# release, tsan and asan of CMakePresets.json, in build-ci/<preset>.  The PoCL driver is
# not rebuilt under the sanitizers: libpocl and its JIT are not instrumented.
# Exits non-zero on the first failing build or test run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
werror=${TT_WERROR:-ON}

run_suite() { # preset (CMakePresets.json; build dir build-ci/<preset>)
  local preset=$1 dir=build-ci/$1
  mkdir -p "$dir"
  echo "=== $preset: configure"
  cmake --preset "$preset" -DTT_WERROR="$werror" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  echo "=== $preset: build"
  cmake --build --preset "$preset" -j"$jobs" >"$dir.build.log" 2>&1 ||
    { tail -n 60 "$dir.build.log"; return 1; }
  echo "=== $preset: test"
  ctest --preset "$preset"
}

run_suite release
run_suite tsan
run_suite asan
echo "=== all suites passed"
