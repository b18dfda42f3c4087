#!/usr/bin/env bash
# make test's set-up on Debian/Ubuntu: checks that the system packages the
# selected test stages need are installed and installs the missing ones when
# it can (as root, or with passwordless sudo: apt-get update, then apt-get
# install). Otherwise it says, within the first seconds, exactly which command
# to run, and exits 2. Go 1.26 is not a Debian package here: it only checks it.
#
#   build/test-setup.sh [stage...]    (default: every stage of build/test.sh)
#
# OMNIROUTE_TEST_SKIP_SETUP=1 skips the check (a machine set up another way).
set -euo pipefail

[ "${OMNIROUTE_TEST_SKIP_SETUP:-}" = 1 ] && exit 0

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(build vet race pins fuzz clients frontend browser desktop package soak)

# What each stage needs beyond Go (Debian package names).
#   cgo and the race detector: a C compiler; PostgreSQL: the store suite and
#   the team-server tests (a throw-away cluster); the desktop build (GTK 3,
#   WebKitGTK 4.1, Ayatana AppIndicator) and its smoke test (Xvfb, D-Bus,
#   ImageMagick, xwininfo); the dashboard in Chromium; the packages
#   (rpmbuild, desktop-file-validate, appstreamcli, makensis, file; Wine and
#   MinGW run the Windows installer and gateway).
gui=(libgtk-3-dev libwebkit2gtk-4.1-dev libayatana-appindicator3-dev)
need_for() {
  case "$1" in
    build|frontend) echo "pkg-config curl" ;;
    vet|fuzz) echo "build-essential" ;;
    race|pins|clients|soak) echo "build-essential postgresql" ;;
    browser) echo "chromium" ;;
    desktop) echo "build-essential pkg-config ${gui[*]} xvfb xauth x11-utils imagemagick dbus-x11" ;;
    package) echo "build-essential pkg-config ${gui[*]} rpm desktop-file-utils appstream nsis file wine64 gcc-mingw-w64-x86-64-win32" ;;
    *) echo "" ;;
  esac
}

want=(make git) # every stage is a make target; the Makefile reads git
for s in "${stages[@]}"; do
  for p in $(need_for "$s"); do
    [[ " ${want[*]} " == *" $p "* ]] || want+=("$p")
  done
done

export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null; then
  echo "test-setup: Go 1.26 is not on PATH: install it from https://go.dev/dl/" >&2
  echo "    (sudo tar -C /usr/local -xzf go1.26.*.linux-amd64.tar.gz; export PATH=\$PATH:/usr/local/go/bin)" >&2
  exit 2
fi

if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
  echo "test-setup: not a Debian/Ubuntu system: install the equivalents of: ${want[*]} nodejs npm" >&2
  echo "test-setup: then run make test with OMNIROUTE_TEST_SKIP_SETUP=1" >&2
  exit 2
fi

# Installed means dpkg's status says "install ok installed" (one query).
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "${want[@]}" 2>/dev/null | awk '/ ok installed$/ {printf "%s ", $1}' || true) "
missing=()
for p in "${want[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done
# Node and npm build the dashboard and install the pinned real clients. A
# node already on PATH is kept (Debian's nodejs conflicts with a separately
# installed npm): nodejs and npm only when node is missing.
if ! command -v node >/dev/null; then
  missing+=(nodejs npm)
elif ! command -v npm >/dev/null; then
  missing+=(npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo)
  else
    echo "test-setup: make test needs these packages, which are not installed: ${missing[*]}" >&2
    echo "test-setup: run this (as root), then make test again:" >&2
    echo "    sudo sh -c '$cmd'" >&2
    exit 2
  fi
  echo "test-setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
