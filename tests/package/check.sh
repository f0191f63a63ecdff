#!/bin/sh
# check.sh BUILD WORK CMAKE CPACK CC POCL_DEPENDS [CLINFO]: the Debian
# packages of the build tree BUILD, checked without installing them.
#   1. cpack writes the .debs into WORK/debs;
#   2. the runtime's package is named for the library's soname
#      (libteams.so.0.1: libteams0.1, Debian's rule); their Depends fields:
#      it needs libhwloc15, teams-pocl the exact libpocl POCL_DEPENDS
#      ("libpocl2t64 (= 6.0-6)"; empty: no driver built) and the ICD loader;
#   3. dpkg-deb -x unpacks them all into the scratch root WORK/root; every
#      package's version is the unpacked teams.pc's (Debian revision 1),
#      and teams/mpi.h is libteams-mpi's, not libteams-dev's;
#   4. tests/consumer/check.sh builds and runs the consumer against
#      WORK/root/usr (find_package, and pkg-config --static);
#   5. WORK/root/usr/bin/teams-run CLINFO must list the teams device: the
#      unpacked teams-run finds the unpacked driver from its own place.
set -eu
build=$1 work=$2 cmake=$3 cpack=$4 cc=$5 pocl_depends=$6 clinfo=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/debs" "$work/root"

echo "== cpack"
(cd "$build" && "$cpack" -G DEB -B "$work/debs") >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }

fail() { echo "check.sh: $*" >&2; exit 1; }
deb() { # package name -> its .deb
  f=$(ls "$work/debs/$1"_*.deb 2>/dev/null | head -n 1)
  [ -n "$f" ] || fail "no package $1 in $work/debs"
  echo "$f"
}
depends() { dpkg-deb -f "$(deb "$1")" Depends; }
expect_depends() { # package, substring of its Depends
  d=$(depends "$1")
  case "$d" in
    *"$2"*) echo "$1 Depends has $2" ;;
    *) fail "$1 Depends '$d' lacks '$2'" ;;
  esac
}
# the runtime's package: libteams<soversion>, the soname read from the
# library it holds
libdeb=$(ls "$work/debs" | grep -E '^libteams[0-9][0-9.]*_' | head -n 1)
[ -n "$libdeb" ] || fail "no runtime package libteams<soversion> in $work/debs"
lib=${libdeb%%_*}
mkdir -p "$work/lib"
dpkg-deb -x "$work/debs/$libdeb" "$work/lib"
so=$(find "$work/lib" -name 'libteams.so.*' -type f | head -n 1)
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$lib" = "libteams${soname#libteams.so.}" ] ||
  fail "the runtime's package is $lib, its library's soname $soname"
echo "$lib holds $soname"
expect_depends "$lib" libhwloc15
expect_depends libteams-dev "$lib (="
expect_depends libteams-dev libhwloc-dev
expect_depends teams-tools "$lib (="
if [ -n "$pocl_depends" ]; then
  expect_depends teams-pocl "$pocl_depends"
  expect_depends teams-pocl ocl-icd-libopencl1
  expect_depends teams-pocl "$lib (="
fi
for f in "$work"/debs/*.deb; do
  echo "unpacking $(basename "$f")"
  dpkg-deb -x "$f" "$work/root"
done
pc=$(find "$work/root" -name teams.pc | head -n 1)
[ -n "$pc" ] || fail "no teams.pc in the packages"
version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion teams)
for f in "$work"/debs/*.deb; do
  v=$(dpkg-deb -f "$f" Version)
  [ "$v" = "$version-1" ] || fail "$(basename "$f"): Version $v, teams.pc says $version"
done
echo "every package is version $version-1"
if dpkg-deb -c "$(deb libteams-dev)" | grep -q 'include/teams/mpi\.h$'; then
  fail "libteams-dev holds teams/mpi.h (the MPI layer's header)"
fi
if ls "$work/debs"/libteams-mpi_*.deb >/dev/null 2>&1; then
  dpkg-deb -c "$(deb libteams-mpi)" | grep -q 'include/teams/mpi\.h$' ||
    fail "libteams-mpi lacks teams/mpi.h"
  echo "teams/mpi.h is libteams-mpi's"
fi

sh "$here/../consumer/check.sh" "$work/root/usr" "$work/consumer" "$cmake" "$cc"

if [ -n "$pocl_depends" ] && [ -n "$clinfo" ]; then
  echo "== teams-run clinfo from the unpacked root"
  # Only the unpacked teams-run and driver: nothing from the build tree.
  "$work/root/usr/bin/teams-run" "$clinfo" >"$work/clinfo.log" 2>&1 ||
    { cat "$work/clinfo.log"; fail "teams-run clinfo failed"; }
  grep -E "Device Name +teams-" "$work/clinfo.log" ||
    { cat "$work/clinfo.log"; fail "clinfo lists no teams device"; }
fi
echo "packages: all checks passed"
