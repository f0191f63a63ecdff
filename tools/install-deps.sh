#!/usr/bin/env bash
# Install what teams needs to build, test and benchmark, as root, on Debian 12
# (bookworm, PoCL 3.1), Debian 13 (trixie, PoCL 6.0) or Debian testing
# (forky, PoCL 7.1).  Installs only what is missing, so a second run costs a
# dpkg query.
#
# A name "a|b" takes the first of a and b that the release has (Debian 13
# renamed libpocl2 to libpocl2t64).  Optional packages that the release does
# not have are left out with a note: the build then leaves out what needs
# them (CMake says so) and the tests that need them are not registered.
set -euo pipefail
required=(
  build-essential cmake pkg-config xz-utils
  file dpkg-dev  # cpack's DEB generator (the package test): file, dpkg-shlibdeps
  libhwloc-dev hwloc libcriterion-dev spin
  libudev-dev  # hwloc.pc's static link flags (-ludev): pkg-config --static teams
  clang libomp-dev libtbb-dev gnuplot-nox
  'libpocl2t64|libpocl2' libpocl-dev pocl-source pocl-opencl-icd pocl-tests
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo
  openmpi-bin libopenmpi-dev
  python3 python3-pyopencl python3-numpy
  # tools/test-pocl-versions.sh and bench-pocl-versions.sh make a Debian root
  # of each other release (tools/pocl-root.sh): debootstrap; chroot, unshare
  # and mount come with coreutils, util-linux and mount, which every Debian has.
  debootstrap
)
# name:why -- left out, with the note, where the release lacks them.
optional=(
  'libclblast-dev:CLBlast, for teams-bench-cl cl-blas and the CLBlast tests'
  'liboclgrind-21.10:Oclgrind, a second OpenCL platform beside teams (test teams-run-icd)'
  'oclgrind:Oclgrind, a second OpenCL platform beside teams (test teams-run-icd)'
  'clpeak:clpeak, a peer client for tools/bench-pocl-versions.sh'
  'spirv-headers:the SPIR-V headers, for building the OpenCL CTS (tools/cts.sh)'
  'spirv-tools:spirv-as and spirv-val, for building the OpenCL CTS (tools/cts.sh)'
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
# The release has package $1 (a candidate version in the apt lists).
available() {
  local c
  c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  [[ -n $c && $c != "(none)" ]]
}

# Pass 1 without the apt lists: everything present means nothing to do.
missing=0
for p in "${required[@]}"; do
  found=0
  IFS='|' read -ra alts <<<"$p"
  for a in "${alts[@]}"; do installed "$a" && found=1 && break; done
  ((found)) || missing=1
done
# An optional package missing counts only where the apt lists offer it.
for o in "${optional[@]}"; do
  installed "${o%%:*}" || ! available "${o%%:*}" || missing=1
done

notes=()
if ((missing)); then
  if [[ $(id -u) != 0 ]]; then
    echo "install-deps: packages are missing; run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  want=()
  for p in "${required[@]}"; do
    IFS='|' read -ra alts <<<"$p"
    pick=""
    for a in "${alts[@]}"; do
      if installed "$a" || available "$a"; then pick=$a; break; fi
    done
    if [[ -z $pick ]]; then
      echo "install-deps: this release has none of: ${alts[*]}" >&2
      exit 1
    fi
    installed "$pick" || want+=("$pick")
  done
  for o in "${optional[@]}"; do
    name=${o%%:*}
    if installed "$name"; then continue; fi
    if available "$name"; then
      want+=("$name")
    else
      notes+=("$name is not in this release: left out (${o#*:})")
    fi
  done
  if ((${#want[@]})); then
    apt-get install -y -qq --no-install-recommends "${want[@]}"
  fi
else
  for o in "${optional[@]}"; do
    installed "${o%%:*}" || notes+=("${o%%:*} is not in this release: left out (${o#*:})")
  done
fi
for n in "${notes[@]}"; do echo "install-deps: note: $n"; done
pocl=$(dpkg-query -W -f='${Version}' libpocl2t64 2>/dev/null || dpkg-query -W -f='${Version}' libpocl2)
echo "install-deps: all required packages present (PoCL $pocl)"
