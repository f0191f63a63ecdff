#!/usr/bin/env bash
# The MPI rows: 1, 2 and 4 ranks of the programs in examples/mpi on this
# machine, each rank's team sized to its share of the cores (at least 1).
#   bash bench/teams-bench-mpi.sh [build-dir]
# Rows: stencil7 time per step (1 rank = one process), the triangular grid
# (one core, ideal, static rank split, rank tier) and the rank tier on a
# uniform grid against the static split.  A benchmark: nothing is asserted
# beyond the programs' own result checks.
set -euo pipefail
build=${1:-build}
ex=$build/examples/mpi
[[ -x $ex/teams-mpi-tri ]] || { echo "teams-bench-mpi: build $ex first (needs MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Ranks that wait (in a barrier, or done with their work) yield the CPU to
# ranks still working when there are more ranks than cores.
export OMPI_MCA_mpi_yield_when_idle=1
cores=$(nproc)
for np in 1 2 4; do
  threads=$(( cores / np )); (( threads >= 1 )) || threads=1
  echo "== $np rank(s), TEAMS_NUM_THREADS=$threads each"
  # Open MPI binds up to 2 ranks to one core each, 1 rank included: one
  # process must be unbound to use the machine.
  bind=(); (( np == 1 )) && bind=(--bind-to none)
  run() { TEAMS_NUM_THREADS=$threads mpirun "${bind[@]}" -np "$np" "$@"; }
  run "$ex/teams-mpi-stencil" 128 128 128 20
  run "$ex/teams-mpi-tri" 24000 7
  run "$ex/teams-mpi-tri" 24000 7 --uniform
done
if [[ -x $ex/teams-mpi-cl && -x $build/tools/teams-run ]]; then
  export POCL_CACHE_DIR=$build/bench-mpi-cl-cache
  for np in 1 2 4; do
    threads=$(( cores / np )); (( threads >= 1 )) || threads=1
    echo "== OpenCL, $np rank(s) through teams-run, TEAMS_NUM_THREADS=$threads each"
    bind=(); (( np == 1 )) && bind=(--bind-to none)
    TEAMS_NUM_THREADS=$threads mpirun "${bind[@]}" -np "$np" "$build/tools/teams-run" "$ex/teams-mpi-cl" 16384
  done
fi
