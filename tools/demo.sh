#!/usr/bin/env bash
# Build teams (release) and run the main job: the kernel demo through the C
# launcher API; then show the OpenCL device that unmodified programs get
# through the ICD loader when run with tools/teams-run.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"${JOBS:-$(nproc)}" >/dev/null
./build/tools/teams-demo
if [[ -x build/tools/teams-run ]] && command -v clinfo >/dev/null; then
  echo
  echo "OpenCL through the ICD loader on the teams driver (build/tools/teams-run clinfo -l):"
  ./build/tools/teams-run clinfo -l
fi
