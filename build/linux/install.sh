#!/bin/sh
# Installs OmniRoute from this directory (bin/ and share/ as laid out by
# build/package.sh) under a prefix, or removes exactly what it installed.
#
#   ./install.sh [--prefix DIR]       default: a place already on your PATH (below)
#   ./install.sh --uninstall [--prefix DIR]
#   ./install.sh --print-bindir [--prefix DIR]   where the commands would go
#
# Without --prefix (or BINDIR) the commands go where this shell already finds
# commands, so `omniroute` works in the same terminal right away: the first
# of /usr/local/bin (as root), ~/.local/bin and ~/bin that is on PATH and
# writable (the rest under /usr/local or ~/.local). When none is, it installs
# under /usr/local (root) or ~/.local and its last line is the command to
# paste that puts the directory on PATH.
#
# What it installs is listed in PREFIX/share/omniroute/install-manifest, and
# --uninstall removes those files and nothing else: the data directory
# (~/.config/omniroute: connections, keys, the database) is never touched.
# `make install` and `make uninstall` run this script too.
set -eu

src=$(cd "$(dirname "$0")" && pwd)
prefix=
mode=install
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift 2 ;;
	--prefix=*) prefix=${1#--prefix=}; shift ;;
	--uninstall) mode=uninstall; shift ;;
	--print-bindir) mode=print; shift ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

on_path() { case ":$PATH:" in *":$1:"*) return 0 ;; esac; return 1; }
# usable DIR: DIR is a writable directory, or can be made in a writable one.
usable() {
	if [ -d "$1" ]; then [ -w "$1" ]; else
		usable_up=$(dirname "$1")
		while [ ! -d "$usable_up" ]; do usable_up=$(dirname "$usable_up"); done
		[ -w "$usable_up" ]
	fi
}
# The candidates, as "PREFIX|BINDIR" lines, in order of preference.
candidates() {
	if [ "$(id -u)" = 0 ]; then echo "/usr/local|/usr/local/bin"; fi
	echo "$HOME/.local|$HOME/.local/bin"
	echo "$HOME/.local|$HOME/bin"
}

if [ -z "$prefix" ] && [ "$mode" = uninstall ]; then
	# Wherever an earlier install without --prefix put its manifest: the
	# place it would choose now first, then any other candidate.
	prefix=$( (candidates | while IFS='|' read -r p b; do
		if on_path "$b"; then echo "$p|$b"; fi
	done; candidates) | while IFS='|' read -r p _; do
		if [ -f "$p/share/omniroute/install-manifest" ]; then echo "$p"; break; fi
	done)
fi
if [ -n "$prefix" ]; then
	bindir=${BINDIR:-$prefix/bin}
elif [ -n "${BINDIR:-}" ]; then
	bindir=$BINDIR
	# The rest goes where it goes with that bin directory (make install
	# passes the one --print-bindir chose).
	prefix=$(candidates | while IFS='|' read -r p b; do
		if [ "$b" = "$bindir" ]; then echo "$p"; break; fi
	done)
	if [ -z "$prefix" ]; then
		if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
	fi
else
	found=$(candidates | while IFS='|' read -r p b; do
		if on_path "$b" && usable "$b"; then echo "$p|$b"; break; fi
	done)
	if [ -n "$found" ]; then
		prefix=${found%%|*} bindir=${found#*|}
	else
		if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
		bindir=$prefix/bin
	fi
fi
if [ "$mode" = print ]; then
	echo "$bindir"
	exit 0
fi
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
	# A cache the refresh left in a directory that holds nothing else was ours.
	for c in "$share/applications/mimeinfo.cache" "$share/icons/hicolor/icon-theme.cache"; do
		d=$(dirname "$c")
		if [ -f "$c" ] && [ -z "$(find "$d" -type f ! -name "$(basename "$c")" -print 2>/dev/null | head -n 1)" ]; then
			rm -f "$c"
		fi
	done
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
echo "installed OmniRoute $(cat "$src/share/omniroute/VERSION" 2>/dev/null || true) in $prefix (the commands in $bindir; $(wc -l <"$manifest") files; undo: $0 --uninstall --prefix $prefix)"
if ! on_path "$bindir"; then
	echo "$bindir is not on your PATH: paste this line to use omniroute in this terminal now, and add it to your shell profile (~/.profile) for new ones:"
	echo "export PATH=\"$bindir:\$PATH\""
fi
