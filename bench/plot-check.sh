#!/bin/sh
# The --plot test (registered by bench/plot.cmake), not a benchmark: no
# number is checked, only that the pictures are drawn and name what the
# table reports.
#
#   plot-check.sh PROGRAM DIR SECTION...
#
# 1. With no gnuplot in PATH, PROGRAM --plot must fail at once: an error
#    that names gnuplot, no rows measured, no file.
# 2. For each SECTION, PROGRAM --quick --tsv --section SECTION --plot
#    DIR/SECTION/plot.svg must exit 0 and, for every section of its TSV,
#    leave DIR/SECTION/plot-S.svg: an SVG document whose text names every
#    system and every metric of section S's rows in the same run's TSV.
set -eu
prog=$1 dir=$2
shift 2

fail() {
  echo "plot-check: $*" >&2
  exit 1
}

# As gnuplot's SVG terminal writes text: & and < escaped.
escape() {
  printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g'
}

rm -rf "$dir"
mkdir -p "$dir"

if PATH=/nonexistent "$prog" --quick --tsv --section "$1" \
     --plot "$dir/none.svg" >"$dir/none.tsv" 2>"$dir/none.err"; then
  fail "--plot without gnuplot in PATH exited 0"
fi
grep -q gnuplot "$dir/none.err" || fail "no message about gnuplot: $(cat "$dir/none.err")"
test ! -s "$dir/none.tsv" || fail "--plot without gnuplot measured anyway"
for f in "$dir"/none-*; do
  test ! -e "$f" || fail "--plot without gnuplot left $f"
done

# check OUT S: OUT/plot-S.svg against section S's rows in OUT/plot.tsv.
check() {
  svg=$1/plot-$2.svg
  test -s "$svg" || fail "no $svg"
  head -n 5 "$svg" | grep -q '^<svg' || fail "$svg does not open an <svg> element"
  tail -n 2 "$svg" | grep -q '^</svg>' || fail "$svg does not close its <svg> element"
  # Systems name a panel's rows; a metric opens its panel's title.
  awk -F '\t' -v s="$2" '$1 == s { print $2 }' "$1/plot.tsv" | sort -u >"$1/systems"
  while IFS= read -r name; do
    grep -qF ">$(escape "$name")<" "$svg" || fail "$svg does not name system $name"
  done <"$1/systems"
  awk -F '\t' -v s="$2" '$1 == s { print $3 }' "$1/plot.tsv" | sort -u >"$1/metrics"
  while IFS= read -r name; do
    grep -qF ">$(escape "$name") [" "$svg" || fail "$svg has no panel for $name"
  done <"$1/metrics"
  echo "plot-check: $svg: $(wc -l <"$1/systems") systems, $(wc -l <"$1/metrics") metrics"
}

for section in "$@"; do
  out=$dir/$section
  mkdir -p "$out"
  "$prog" --quick --tsv --section "$section" --plot "$out/plot.svg" \
    >"$out/plot.tsv" || fail "$prog --section $section exited with status $?"
  test -s "$out/plot.tsv" || fail "no rows for section $section"
  cut -f1 "$out/plot.tsv" | sort -u >"$out/sections"
  while IFS= read -r s; do
    check "$out" "$s"
  done <"$out/sections"
done
