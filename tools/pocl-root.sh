# Debian roots with another PoCL, for tools/test-pocl-versions.sh and
# tools/bench-pocl-versions.sh (sourced, not run).
#
# A root is a minimal Debian of one release made with debootstrap, kept in
# $TEAMS_ROOTS (default /var/cache/teams-roots, outside any clone) and made
# anew when it is a week old.  Commands run in it through chroot, in a mount
# namespace of their own (unshare), so that the binds -- /proc, /sys, /dev
# (with /dev/shm and /dev/pts), and the source tree read-only at /src -- go
# away with the command, even when it is killed.  Root only.
#
#   release   PoCL  made with
#   bookworm  3.1   debootstrap's bookworm script
#   trixie    6.0   debootstrap's trixie script
#   forky     7.1   debootstrap's sid script (bookworm's debootstrap has no
#                   forky one; testing is sid's successor in kind)
# Testing's Release file can be past its Valid-Until against the clock of a
# machine whose mirror lags, so the roots set Acquire::Check-Valid-Until
# "false".

TEAMS_ROOTS=${TEAMS_ROOTS:-/var/cache/teams-roots}
TEAMS_DEBIAN_MIRROR=${TEAMS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
TEAMS_ROOT_MAX_DAYS=${TEAMS_ROOT_MAX_DAYS:-7}

# The releases a root can be made of: every Debian release whose PoCL the
# driver supports (configure refuses the others).
pocl_root_releases() { echo bookworm trixie forky; }

# The PoCL version each release is expected to bring (checked after the
# root's install-deps: a release that moved on is reported, not hidden).
pocl_root_expect() {
  case $1 in
    bookworm) echo 3.1 ;;
    trixie) echo 6.0 ;;
    forky) echo 7.1 ;;
    *) return 1 ;;
  esac
}

# pocl_root_make RELEASE: prints the root's path; makes it when missing or
# older than TEAMS_ROOT_MAX_DAYS.  Fails, saying why, when it cannot.
pocl_root_make() {
  local rel=$1 dir=$TEAMS_ROOTS/$1 script=""
  pocl_root_expect "$rel" >/dev/null || {
    echo "pocl-root: unknown release '$rel' (known: $(pocl_root_releases))" >&2
    return 1
  }
  if [[ -f $dir/.teams-root ]] &&
    [[ -n $(find "$dir/.teams-root" -mtime -"$TEAMS_ROOT_MAX_DAYS" 2>/dev/null) ]]; then
    echo "$dir"
    return 0
  fi
  if ! command -v debootstrap >/dev/null; then
    echo "pocl-root: debootstrap not found (apt-get install debootstrap)" >&2
    return 1
  fi
  local scripts=/usr/share/debootstrap/scripts
  if [[ ! -e $scripts/$rel ]]; then
    # bookworm's debootstrap knows sid but not forky; they bootstrap alike.
    [[ -e $scripts/sid ]] || {
      echo "pocl-root: debootstrap has no script for $rel, nor sid's" >&2
      return 1
    }
    script=$scripts/sid
  fi
  mkdir -p "$TEAMS_ROOTS"
  local new=$dir.new log=$TEAMS_ROOTS/$rel.debootstrap.log
  rm -rf "$new"
  echo "pocl-root: making the $rel root in $dir (debootstrap, ~1 min)" >&2
  if ! debootstrap --variant=minbase "$rel" "$new" "$TEAMS_DEBIAN_MIRROR" $script >"$log" 2>&1; then
    echo "pocl-root: debootstrap $rel failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    rm -rf "$new"
    return 1
  fi
  printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n' \
    >"$new/etc/apt/apt.conf.d/99teams"
  mkdir -p "$new/src"
  rm -rf "$dir"
  mv "$new" "$dir"
  date -u +%FT%TZ >"$dir/.teams-root"
  echo "$dir"
}

# pocl_root_run ROOT SRC COMMAND...: runs COMMAND in ROOT (as root, with a
# plain environment), the tree SRC mounted read-only at /src.
pocl_root_run() {
  local dir=$1 src=$2
  shift 2
  # The binds live in the namespace unshare makes: gone when it ends.
  unshare --mount --propagation private bash -euc '
    dir=$1 src=$2; shift 2
    mount -t proc proc "$dir/proc"
    mount --rbind /sys "$dir/sys"
    mount --rbind /dev "$dir/dev"
    mount --bind "$src" "$dir/src"
    mount -o remount,bind,ro "$dir/src"
    cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    exec chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' pocl-root "$dir" "$src" "$@"
}
