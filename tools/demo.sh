#!/usr/bin/env bash
# Build teams (release) and run the main job: the kernel demo through the C
# launcher API, then the same kernels through OpenCL on the teams PoCL driver.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"${JOBS:-$(nproc)}" >/dev/null
./build/tools/teams-demo
if [[ -x build/tools/teams-run && -x build/kernels/cl/teams-cl-demo ]]; then
  ./build/tools/teams-run ./build/kernels/cl/teams-cl-demo
fi
