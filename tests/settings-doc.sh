#!/bin/sh
# The README's environment table is the settings table (launcher/internal/
# settings.h) as `teams-info --settings` prints it: every row, in order.
#   tests/settings-doc.sh TEAMS_INFO README
set -u
info=$1 readme=$2
want=$("$info" --settings) || { echo "settings-doc: $info --settings failed" >&2; exit 2; }
# the first table of the README's "## Environment" section
have=$(awk '/^## Environment/ {on = 1; next}
            on && /^## / {exit}
            on && /^\|/ {print; t = 1; next}
            on && t {exit}' "$readme")
if [ "$want" != "$have" ]; then
  echo "settings-doc: the environment table of $readme is not the settings table." >&2
  echo "Replace it with the output of: teams-info --settings" >&2
  printf '%s\n' "$want" >/tmp/settings-doc.want.$$
  printf '%s\n' "$have" >/tmp/settings-doc.have.$$
  diff -u /tmp/settings-doc.have.$$ /tmp/settings-doc.want.$$ >&2
  rm -f /tmp/settings-doc.want.$$ /tmp/settings-doc.have.$$
  exit 1
fi
echo "settings-doc: $(printf '%s\n' "$want" | grep -c '^| `TEAMS_') settings, the README agrees"
