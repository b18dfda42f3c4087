#!/bin/sh
# Installs OmniRoute from this directory (bin/ and share/ as laid out by
# build/package.sh) under a prefix, or removes exactly what it installed.
#
#   ./install.sh [--prefix DIR]       default: /usr/local as root, else ~/.local
#   ./install.sh --uninstall [--prefix DIR]
#
# What it installs is listed in PREFIX/share/omniroute/install-manifest, and
# --uninstall removes those files and nothing else: the data directory
# (~/.config/omniroute: connections, keys, the database) is never touched.
# `make install` and `make uninstall` run this script too.
set -eu

src=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
mode=install
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift 2 ;;
	--prefix=*) prefix=${1#--prefix=}; shift ;;
	--uninstall) mode=uninstall; shift ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
bindir=${BINDIR:-$prefix/bin}
share=$prefix/share
manifest=$share/omniroute/install-manifest

refresh() {
	if command -v update-desktop-database >/dev/null 2>&1 && [ -d "$share/applications" ]; then
		update-desktop-database -q "$share/applications" 2>/dev/null || true
	fi
	if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -d "$share/icons/hicolor" ]; then
		gtk-update-icon-cache -q -t -f "$share/icons/hicolor" 2>/dev/null || true
	fi
}

if [ "$mode" = uninstall ]; then
	if [ ! -f "$manifest" ]; then
		echo "install.sh: nothing installed under $prefix (no $manifest)" >&2
		exit 1
	fi
	while IFS= read -r f; do
		[ -n "$f" ] && rm -f "$f"
	done <"$manifest"
	rm -f "$manifest"
	rmdir "$share/omniroute" 2>/dev/null || true
	refresh
	echo "removed OmniRoute from $prefix (your data in ~/.config/omniroute is kept; delete it by hand to forget every connection)"
	exit 0
fi

mkdir -p "$share/omniroute"
: >"$manifest.new"
put() { # put SRC DEST MODE
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
	echo "$2" >>"$manifest.new"
}
for b in "$src"/bin/*; do
	put "$b" "$bindir/$(basename "$b")" 0755
done
desktop=no
[ -x "$src/bin/omniroute-desktop" ] && desktop=yes
(cd "$src/share" && find . -type f) | sort | while IFS= read -r rel; do
	rel=${rel#./}
	case "$rel" in
	applications/*)
		[ "$desktop" = yes ] || continue
		# The menu entry starts the installed binary wherever it is.
		mkdir -p "$share/applications"
		sed "s|^Exec=omniroute-desktop|Exec=$bindir/omniroute-desktop|" "$src/share/$rel" >"$share/$rel.tmp.$$"
		mv -f "$share/$rel.tmp.$$" "$share/$rel"
		echo "$share/$rel" >>"$manifest.new"
		;;
	*) put "$src/share/$rel" "$share/$rel" 0644 ;;
	esac
done
mv -f "$manifest.new" "$manifest"
refresh
echo "installed OmniRoute $(cat "$src/share/omniroute/VERSION" 2>/dev/null || true) in $prefix ($(wc -l <"$manifest") files; undo: $0 --uninstall --prefix $prefix)"
case ":$PATH:" in
*":$bindir:"*) ;;
*) echo "$bindir is not on your PATH: add  export PATH=\"$bindir:\$PATH\"  to your shell profile, then open a new terminal" ;;
esac
