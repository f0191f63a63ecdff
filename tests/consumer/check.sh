#!/bin/sh
# check.sh [--install BUILD] ROOT WORK CMAKE CC: builds tests/consumer
# against the teams installed under ROOT (a `cmake --install` prefix, or the
# /usr of unpacked packages) in WORK, twice, and runs it:
#   1. a CMake project: find_package(teams), teams::teams (libteams.so);
#   2. by hand: pkg-config --static, with libteams.a for -lteams, so the link
#      needs exactly what teams.pc says the archive needs (hwloc, -lm,
#      -pthread).
# Either program must use ROOT's library, not the build tree's, and print
# the version of teams.pc (the consumer checks its header, its library and
# the CMake package against each other).  teams/mpi.h is installed exactly
# when the MPI layer is.  With --install, `cmake --install BUILD --prefix
# ROOT` makes ROOT first.
set -eu
build=
if [ "$1" = "--install" ]; then
  build=$2
  shift 2
fi
root=$1 work=$2 cmake=$3 cc=$4
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
if [ -n "$build" ]; then
  rm -rf "$root"
  "$cmake" --install "$build" --prefix "$root" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }
fi

echo "== find_package(teams) under $root"
"$cmake" -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_C_COMPILER="$cc" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/cmake" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
lib=$(ldd "$work/cmake/consumer" | sed -n 's/.*\(libteams\.so\.[0-9.]*\) => \([^ ]*\).*/\1 => \2/p')
case "${lib#* => }" in
  "$root"/*) echo "$lib" ;;
  *) echo "check.sh: the consumer loads '$lib', not from $root" >&2; exit 1 ;;
esac
pc=$(find "$root" -name teams.pc | head -n 1)
[ -n "$pc" ] || { echo "check.sh: no teams.pc under $root" >&2; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
version=$(pkg-config --modversion teams)
run_consumer() { # the program; prints its output, checks its version line
  out=$("$1") || { echo "$out"; echo "check.sh: $1 failed" >&2; exit 1; }
  echo "$out"
  echo "$out" | grep -qx "version: $version" ||
    { echo "check.sh: $1 is not version $version (teams.pc)" >&2; exit 1; }
}
run_consumer "$work/cmake/consumer"

if [ -n "$(find "$root" -name 'libteams-mpi.so*' | head -n 1)" ]; then
  [ -f "$root/include/teams/mpi.h" ] ||
    { echo "check.sh: the MPI layer without teams/mpi.h" >&2; exit 1; }
elif [ -e "$root/include/teams/mpi.h" ]; then
  echo "check.sh: teams/mpi.h installed without the MPI layer" >&2
  exit 1
fi

echo "== pkg-config --static teams, libteams.a"
cflags=$(pkg-config --cflags teams)
libs=$(pkg-config --static --libs teams)
echo "cflags: $cflags"
echo "libs:   $libs"
case " $libs " in
  *" -lteams "*) ;;
  *) echo "check.sh: no -lteams in pkg-config's output" >&2; exit 1 ;;
esac
# -l:libteams.a takes the archive where -lteams would take the shared library.
libs=$(echo " $libs " | sed 's/ -lteams / -l:libteams.a /')
# shellcheck disable=SC2086  # word splitting of the flags is intended
"$cc" -std=c11 $cflags "$src/consumer.c" -o "$work/consumer-static" $libs
if readelf -d "$work/consumer-static" | grep -q 'libteams'; then
  echo "check.sh: the static consumer still needs libteams.so" >&2
  exit 1
fi
run_consumer "$work/consumer-static"
