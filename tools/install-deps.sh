#!/usr/bin/env bash
# Install what teams needs to build, test and benchmark on Debian 12, as root.
# Installs only what is missing, so a second run costs a dpkg query.
set -euo pipefail
packages=(
  build-essential cmake pkg-config xz-utils
  libhwloc-dev hwloc libcriterion-dev spin
  libudev-dev  # hwloc.pc's static link flags (-ludev): pkg-config --static teams
  clang libomp-dev libtbb-dev gnuplot-nox
  libclblast-dev  # CLBlast, for teams-bench-cl's cl-blas sections
  libpocl2 libpocl-dev pocl-source pocl-opencl-icd pocl-tests
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo
  liboclgrind-21.10 oclgrind  # a second OpenCL platform beside teams (test teams-run-icd)
  openmpi-bin libopenmpi-dev
  python3-pyopencl python3-numpy
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "install-deps: missing ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"
