#!/bin/sh
# check.sh TEAMS_RUN CLINFO OCLGRIND_ICD WORK: teams-run keeps the OpenCL
# platforms a program sees without it, but PoCL's, and adds teams.
#
# A second real platform: Oclgrind's ICD (Debian oclgrind, which ships no
# .icd file: OCLGRIND_ICD is its library).  In WORK this writes
#   user/     oclgrind.icd, and pocl.icd: the system PoCL's ICD
#   system/   the same, as a vendors path standing for /etc/OpenCL/vendors
#   wide/     oclgrind.icd and a teams.icd naming the prefix's libpocl, as a
#             system-wide install of teams leaves /etc/OpenCL/vendors
# and runs `teams-run CLINFO -l` with OCL_ICD_VENDORS set to user/, to
# user/oclgrind.icd, to the library itself, to a bare .icd name; unset with
# OPENCL_VENDOR_PATH=system/ and =wide/; and with neither set, on this
# machine's /etc/OpenCL/vendors (whose platforms, listed by clinfo without
# teams-run, must all be there, PoCL's aside).  Each time: the PoCL
# platform exactly once, with the teams device and no other, Oclgrind's
# platform and device where its ICD was given, and no ICD of the system
# libpocl in the vendors directory teams-run made.  Then teams-run must
# refuse a directory for its vendors that others may write or that is a link.
set -eu
run=$1 clinfo=$2 oclgrind=$3 work=$4
rm -rf "$work"
mkdir -p "$work/user" "$work/system" "$work/wide" "$work/tmp"
work=$(cd "$work" && pwd)
# Only what each case sets: nothing of the caller's OpenCL environment.
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH POCL_DEVICES XDG_RUNTIME_DIR
TMPDIR=$work/tmp
export TMPDIR

fail() { echo "check.sh: $*" >&2; exit 1; }

sys_pocl=libpocl.so.2
if [ -s /etc/OpenCL/vendors/pocl.icd ]; then
  sys_pocl=$(sed -n 1p /etc/OpenCL/vendors/pocl.icd)
fi
prefix_pocl=$(sed -n 's/^teams_libpocl="\(.*\)"$/\1/p' "$run")
[ -n "$prefix_pocl" ] || fail "no teams_libpocl in $run"
for d in user system; do
  echo "$oclgrind" >"$work/$d/oclgrind.icd"
  echo "$sys_pocl" >"$work/$d/pocl.icd"
done
echo "$oclgrind" >"$work/wide/oclgrind.icd"
echo "$prefix_pocl" >"$work/wide/teams.icd"

# expect NAME OCLGRIND(yes|no) [VAR=value...]: one case.
expect() {
  name=$1 want_oclgrind=$2
  shift 2
  out=$(env "$@" "$run" "$clinfo" -l 2>&1) || { echo "$out"; fail "$name: teams-run $clinfo -l failed"; }
  echo "== $name"
  echo "$out"
  n=$(echo "$out" | grep -c '^Platform #[0-9]*: Portable Computing Language$' || true)
  [ "$n" = 1 ] || fail "$name: $n PoCL platforms, want 1 (teams', never the system PoCL's beside it)"
  # The PoCL platform's devices: teams only.
  devs=$(echo "$out" | awk '/^Platform #/ { p = ($0 ~ /: Portable Computing Language$/) } p && /Device #/')
  echo "$devs" | grep -q 'Device #0: teams-' || fail "$name: no teams device"
  [ "$(echo "$devs" | wc -l)" = 1 ] || fail "$name: the PoCL platform has other devices: $devs"
  if [ "$want_oclgrind" = yes ]; then
    echo "$out" | grep -q '^Platform #[0-9]*: Oclgrind$' || fail "$name: no Oclgrind platform"
    echo "$out" | grep -q 'Device #0: Oclgrind Simulator' || fail "$name: no Oclgrind device"
  fi
  # What the loader was given: no ICD of the system libpocl.
  icds=$(env "$@" "$run" sh -c 'cat "$OCL_ICD_VENDORS"/*.icd')
  if echo "$icds" | grep -qx "$sys_pocl"; then
    fail "$name: the vendors directory holds the system PoCL's ICD: $icds"
  fi
}

expect "OCL_ICD_VENDORS=directory" yes OCL_ICD_VENDORS="$work/user"
expect "OCL_ICD_VENDORS=file.icd" yes OCL_ICD_VENDORS="$work/user/oclgrind.icd"
expect "OCL_ICD_VENDORS=library" yes OCL_ICD_VENDORS="$oclgrind"
expect "OCL_ICD_VENDORS=name.icd in the vendors path" yes \
  OPENCL_VENDOR_PATH="$work/system" OCL_ICD_VENDORS=oclgrind.icd
expect "the vendors path (OPENCL_VENDOR_PATH)" yes OPENCL_VENDOR_PATH="$work/system"
expect "teams installed system-wide" yes OPENCL_VENDOR_PATH="$work/wide"
expect "/etc/OpenCL/vendors" no
# There, every platform of this machine but PoCL's.
plain=$("$clinfo" -l 2>/dev/null | sed -n 's/^Platform #[0-9]*: //p' |
  grep -vx 'Portable Computing Language' || true)
with=$("$run" "$clinfo" -l 2>&1 | sed -n 's/^Platform #[0-9]*: //p')
echo "$plain" | while IFS= read -r p; do
  [ -z "$p" ] || echo "$with" | grep -qxF "$p" ||
    fail "/etc/OpenCL/vendors: platform '$p' missing under teams-run"
done
echo "/etc/OpenCL/vendors: every platform there (${plain:-none} besides PoCL)"

# Its directory must be the user's alone.
base=$work/tmp/teams-run-$(id -u)
chmod 777 "$base"
if msg=$("$run" true 2>&1); then
  fail "teams-run ran with $base writable by others"
fi
echo "refused: $msg"
echo "$msg" | grep -q "writable by others" || fail "unclear refusal: $msg"
rm -rf "$base"
ln -s "$work/user" "$base"
if msg=$("$run" true 2>&1); then
  fail "teams-run ran with $base a link"
fi
echo "refused: $msg"
echo "teams-run: all checks passed"
