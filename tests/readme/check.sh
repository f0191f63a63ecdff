#!/bin/sh
# check.sh README CC INCLUDE LIBTEAMS WORK: every C block of README (a
# fenced block opened with ```c) is a whole program; each is built in WORK
# against the headers in INCLUDE and the shared library LIBTEAMS, with
# warnings as errors, and must run, exit 0 and print "success".  So the
# examples a newcomer copies keep compiling as the API changes.
set -eu
readme=$1 cc=$2 include=$3 lib=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
awk -v dir="$work" '
  /^```c$/ { n++; f = sprintf("%s/example-%d.c", dir, n); next }
  /^```/ && f { close(f); f = ""; next }
  f { print > f }
' "$readme"
n=0
for src in "$work"/example-*.c; do
  [ -f "$src" ] || { echo "check.sh: no C block in $readme" >&2; exit 1; }
  n=$((n + 1))
  exe=${src%.c}
  echo "== $(basename "$src")"
  "$cc" -std=c11 -Wall -Wextra -Werror -I"$include" "$src" -o "$exe" "$lib" \
    -Wl,-rpath,"$(dirname "$lib")" -lm
  out=$("$exe") || { echo "$out"; echo "check.sh: $exe failed" >&2; exit 1; }
  echo "$out"
  echo "$out" | grep -q '^success' || { echo "check.sh: $exe did not say success" >&2; exit 1; }
done
echo "$n examples of $readme built and ran"
