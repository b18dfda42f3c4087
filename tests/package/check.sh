#!/usr/bin/env bash
# Checks what `make package` built (make test-package): the .deb's and .rpm's
# metadata and contents, the menu entry and AppStream file as the validators
# read them, an install of the .deb (on the machine itself when root, as CI
# is: its dependencies are the GUI libraries CI installs) with the installed
# gateway answering and a purge that leaves the user's data, and the tarball's
# install.sh into a prefix and back out, leaving nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
VERSION=$(cat VERSION)
ARCH=$(go env GOARCH)
case "$ARCH" in amd64) RPM_ARCH=x86_64 ;; arm64) RPM_ARCH=aarch64 ;; *) RPM_ARCH=$ARCH ;; esac
DEB=bin/omniroute_${VERSION}_${ARCH}.deb
RPM=bin/omniroute-${VERSION}-1.${RPM_ARCH}.rpm
TAR=bin/omniroute-${VERSION}-linux-${ARCH}.tar.gz
TMP=$(mktemp -d /tmp/omniroute-package.XXXXXX)
PASS=0 FAIL=0 PID=
INSTALLED_DEB=no
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null || true
	if [ "$INSTALLED_DEB" = yes ]; then dpkg --purge omniroute >/dev/null 2>&1 || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
check() { # check NAME CMD...
	local name=$1
	shift
	if "$@" >"$TMP/out" 2>&1; then ok "$name"; else bad "$name"; sed 's/^/     /' "$TMP/out" | tail -20; fi
}

# The files every package must carry, relative to /usr.
expected() {
	echo bin/omniroute bin/omniroute-desktop share/applications/omniroute.desktop \
		share/metainfo/io.omniroute.OmniRoute.metainfo.xml share/man/man1/omniroute.1.gz \
		share/bash-completion/completions/omniroute share/zsh/vendor-completions/_omniroute \
		share/fish/vendor_completions.d/omniroute.fish share/icons/hicolor/scalable/apps/omniroute.svg \
		share/doc/omniroute/API.md
	for n in 16 22 24 32 48 64 128 256 512; do echo "share/icons/hicolor/${n}x${n}/apps/omniroute.png"; done
}
has_all() { # has_all LISTFILE PREFIX
	local missing=0 f
	for f in $(expected); do
		grep -qx "$2$f" "$1" || { echo "missing $2$f"; missing=1; }
	done
	return $missing
}

for f in "$DEB" "$RPM" "$TAR"; do check "built $f" test -s "$f"; done

# --- .deb metadata and contents ------------------------------------------------
dpkg-deb -I "$DEB" >"$TMP/deb-info"
check "deb: package and version" grep -qx " Version: $VERSION" "$TMP/deb-info"
check "deb: depends on the GUI libraries" grep -q "Depends:.*libwebkit2gtk-4.1-0.*libayatana-appindicator3-1" "$TMP/deb-info"
check "deb: maintainer scripts" grep -q "postrm" "$TMP/deb-info"
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./usr/||' >"$TMP/deb-list"
check "deb: every file" has_all "$TMP/deb-list" ""
# make test builds with xz level 1 (PACKAGE_FAST), releases with level 6: the format is the same.
check "deb: xz-compressed payload" sh -c "ar t '$DEB' | grep -qx data.tar.xz"
check "deb: owned by root" sh -c "! dpkg-deb -c '$DEB' | awk '{print \$2}' | grep -v '^root/root$'"
mkdir -p "$TMP/x" && dpkg-deb -x "$DEB" "$TMP/x"
DESKTOP_FILE=$TMP/x/usr/share/applications/omniroute.desktop
check "desktop entry validates" desktop-file-validate "$DESKTOP_FILE"
check "desktop entry starts the desktop binary" grep -qx "Exec=omniroute-desktop" "$DESKTOP_FILE"
WMCLASS=$(sed -n 's/^StartupWMClass=//p' "$DESKTOP_FILE")
# GTK names the window after the binary (WM_CLASS "omniroute-desktop"); the
# desktop smoke reads the real window's class and compares it with the entry.
check "desktop entry's window class is the installed binary's name" test "$WMCLASS" = omniroute-desktop
if command -v appstreamcli >/dev/null; then
	check "AppStream metainfo validates" appstreamcli validate --no-net "$TMP/x/usr/share/metainfo/io.omniroute.OmniRoute.metainfo.xml"
fi
check "AppStream release is the version" grep -q "<release version=\"$VERSION\"" "$TMP/x/usr/share/metainfo/io.omniroute.OmniRoute.metainfo.xml"
check "man page renders" sh -c "zcat '$TMP/x/usr/share/man/man1/omniroute.1.gz' | grep -q 'OmniRoute $VERSION'"
check "bash completion loads" bash -c "source '$TMP/x/usr/share/bash-completion/completions/omniroute' && complete -p omniroute"
check "packaged CLI prints the version" sh -c "'$TMP/x/usr/bin/omniroute' --version | grep -q '^omniroute $VERSION (commit '"

# --- .rpm ----------------------------------------------------------------------
if command -v rpm >/dev/null; then
	rpm -qip "$RPM" >"$TMP/rpm-info" 2>/dev/null
	check "rpm: name and version" sh -c "grep -q '^Name *: omniroute' '$TMP/rpm-info' && grep -q '^Version *: $VERSION' '$TMP/rpm-info'"
	check "rpm: requires the GUI libraries" sh -c "rpm -qp --requires '$RPM' 2>/dev/null | grep -q webkit2gtk4.1"
	rpm -qlp "$RPM" 2>/dev/null | sed 's|^/usr/||' >"$TMP/rpm-list"
	check "rpm: every file" has_all "$TMP/rpm-list" ""
	check "rpm: xz-compressed payload" sh -c "rpm -qp --qf '%{PAYLOADCOMPRESSOR}' '$RPM' 2>/dev/null | grep -qx xz"
else
	bad "rpm is not installed (apt-get install rpm)"
fi

# --- the .deb installed, run, purged ----------------------------------------------
if [ "$(id -u)" = 0 ] && command -v dpkg >/dev/null; then
	USERHOME=$TMP/home
	mkdir -p "$USERHOME/.config/omniroute" && echo keep >"$USERHOME/.config/omniroute/marker"
	if dpkg -i "$DEB" >"$TMP/dpkg.log" 2>&1; then
		INSTALLED_DEB=yes
		ok "deb installs (dpkg -i)"
	else
		bad "deb installs (dpkg -i)"
		tail -20 "$TMP/dpkg.log"
	fi
	check "installed CLI on PATH" sh -c "command -v omniroute | grep -qx /usr/bin/omniroute && omniroute --version | grep -q $VERSION"
	check "installed menu entry" test -f /usr/share/applications/omniroute.desktop
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	HOME=$USERHOME OMNIROUTE_PORT=$PORT /usr/bin/omniroute --headless >"$TMP/run.log" 2>&1 &
	PID=$!
	up=no
	for _ in $(seq 100); do
		if curl -fsS "http://127.0.0.1:$PORT/api/monitoring/health" >/dev/null 2>&1; then up=yes; break; fi
		sleep 0.1
	done
	if [ "$up" = yes ]; then ok "installed gateway answers /api/monitoring/health"; else bad "installed gateway answers"; tail -20 "$TMP/run.log"; fi
	check "installed gateway keeps its data in the user's config dir" test -f "$USERHOME/.config/omniroute/omniroute.db"
	kill "$PID" && wait "$PID" 2>/dev/null || true
	PID=
	check "deb purges" dpkg --purge omniroute
	INSTALLED_DEB=no
	check "purge removed every packaged file" sh -c "for f in $(expected | tr '\n' ' '); do [ ! -e /usr/\$f ] || { echo left /usr/\$f; exit 1; }; done"
	check "purge kept the user's data" sh -c "test -f '$USERHOME/.config/omniroute/marker' && test -f '$USERHOME/.config/omniroute/omniroute.db'"
else
	echo "note: not root: the .deb is checked but not installed on this machine"
fi

# --- the tarball's install.sh into a prefix and back out --------------------------
mkdir -p "$TMP/t" && tar -C "$TMP/t" -xzf "$TAR"
SRC=$TMP/t/omniroute-${VERSION}-linux-${ARCH}
PREFIX=$TMP/prefix
if env PATH="/usr/bin:/bin" "$SRC/install.sh" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then
	ok "tarball: install.sh installs into a prefix"
else
	bad "tarball: install.sh installs into a prefix"
	cat "$TMP/install.log"
fi
check "tarball: install.sh ends with the line to paste that reaches the CLI" sh -c "tail -n 2 '$TMP/install.log' | head -n 1 | grep -q 'is not on your PATH' && tail -n 1 '$TMP/install.log' | grep -qxF 'export PATH=\"$PREFIX/bin:\$PATH\"'"
(cd "$PREFIX" && find . -type f | sed 's|^\./||' | sort) >"$TMP/prefix-list"
check "tarball: every file in the prefix" has_all "$TMP/prefix-list" ""
check "tarball: the menu entry starts the installed binary" grep -qx "Exec=$PREFIX/bin/omniroute-desktop" "$PREFIX/share/applications/omniroute.desktop"
check "tarball: installed CLI runs" sh -c "'$PREFIX/bin/omniroute' --version | grep -q $VERSION"
check "tarball: install.sh --uninstall" "$SRC/install.sh" --uninstall --prefix "$PREFIX"
check "tarball: nothing left in the prefix" sh -c "test -z \"\$(find '$PREFIX' -type f)\""

# --- Windows: the cross-compiled binaries and the NSIS installer ---------------
SETUP=bin/omniroute-${VERSION}-windows-amd64-setup.exe
check "windows: installer built" test -s "$SETUP"
check "windows: installer is a 64-bit NSIS installer" sh -c "file '$SETUP' | grep -q 'PE32+ executable (GUI) x86-64' && grep -aq Nullsoft '$SETUP'"
check "windows: gateway is a 64-bit console program" sh -c "file dist-pkg/windows/omniroute.exe | grep -q 'PE32+ executable (console) x86-64'"
check "windows: desktop app is a 64-bit GUI program" sh -c "file dist-pkg/windows/omniroute-desktop.exe | grep -q 'PE32+ executable (GUI) x86-64'"
check "windows: installer carries the version" sh -c "strings -el '$SETUP' | grep -q '$VERSION' || strings '$SETUP' | grep -q '$VERSION'"
check "windows: start at login is optional and the uninstaller keeps the data" bash -c \
	"grep -q 'Section /o \"Start OmniRoute at login\"' build/windows/installer.nsi && ! grep -iE '^ *(RMDir|Delete)' build/windows/installer.nsi | grep -qi appdata"

# --- Windows under Wine: install, run the gateway, proxy a request, uninstall -----
# Debian's Wine 8.0 lacks bcryptprimitives.dll, which Go's runtime loads from
# System32 first: a stand-in built here with MinGW (tests/package/wine, never
# shipped) goes into the throw-away prefix. Everything else is the real
# installer and the real programs.
WINE=/usr/lib/wine/wine64
if [ -x "$WINE" ] && command -v x86_64-w64-mingw32-gcc >/dev/null; then
	export WINEPREFIX=$TMP/wine WINEDEBUG=-all WINEDLLOVERRIDES="bcryptprimitives=n;mscoree,mshtml="
	win_stop() { WINEPREFIX=$TMP/wine /usr/lib/wine/wineserver -k >/dev/null 2>&1 || true; }
	trap 'win_stop; cleanup' EXIT
	check "wine: prefix" "$WINE" wineboot -i
	check "wine: the bcryptprimitives stand-in builds" x86_64-w64-mingw32-gcc -shared -O2 -s -o "$TMP/bcryptprimitives.dll" \
		tests/package/wine/bcryptprimitives.c tests/package/wine/bcryptprimitives.def -ladvapi32
	cp "$TMP/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
	check "wine: the installer runs silently (/S)" "$WINE" "$SETUP" /S
	APPDIR=$(find "$WINEPREFIX/drive_c/users" -maxdepth 5 -type d -path '*/AppData/Local/Programs/OmniRoute' | head -n 1)
	check "wine: installed under %LOCALAPPDATA%\\Programs\\OmniRoute" sh -c "test -f '$APPDIR/omniroute.exe' && test -f '$APPDIR/omniroute-desktop.exe' && test -f '$APPDIR/uninstall.exe'"
	check "wine: Start-menu entry" sh -c "find '$WINEPREFIX/drive_c/users' -path '*Start Menu/Programs/OmniRoute/OmniRoute.lnk' | grep -q ."
	check "wine: installed gateway prints the version" sh -c "'$WINE' '$APPDIR/omniroute.exe' --version | grep -q '^omniroute $VERSION'"
	go build -o "$TMP/fakeupstream" ./tests/cmd/fakeupstream
	"$TMP/fakeupstream" -addr 127.0.0.1:0 >"$TMP/fake.log" 2>&1 &
	FAKEPID=$!
	for _ in $(seq 50); do grep -q listening "$TMP/fake.log" && break; sleep 0.1; done
	FAKE=$(sed -n 's/^listening on //p' "$TMP/fake.log")
	WPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	OMNIROUTE_PORT=$WPORT "$WINE" "$APPDIR/omniroute.exe" --headless >"$TMP/win-run.log" 2>"$TMP/win-run.err" &
	WINPID=$!
	for _ in $(seq 300); do grep -q "Dashboard:" "$TMP/win-run.log" 2>/dev/null && break; sleep 0.1; done
	WKEY=$(sed -n 's/^ *API key: *\(sk-omni-[^ ]*\).*/\1/p' "$TMP/win-run.log")
	WTOKEN=$(sed -n 's/.*#token=\([^ ]*\).*/\1/p' "$TMP/win-run.log")
	check "wine: gateway answers /api/monitoring/health" sh -c "curl -fsS http://127.0.0.1:$WPORT/api/monitoring/health | grep -q '\"status\"'"
	check "wine: data in %APPDATA%\\omniroute" sh -c "find '$WINEPREFIX/drive_c/users' -path '*AppData/Roaming/omniroute/omniroute.db' | grep -q ."
	check "wine: a connection is added" sh -c "curl -fsS -H 'Authorization: Bearer $WTOKEN' -H 'Content-Type: application/json' \
		-d '{\"provider\":\"openai-compatible\",\"name\":\"fake\",\"prefix\":\"fake\",\"apiKey\":\"sk-fake-wine\",\"baseUrl\":\"$FAKE/v1\",\"models\":[\"gpt-4o-mini\"]}' \
		http://127.0.0.1:$WPORT/api/providers"
	check "wine: a chat request is proxied to the upstream" sh -c "curl -fsS -H 'Authorization: Bearer $WKEY' -H 'Content-Type: application/json' \
		-d '{\"model\":\"fake/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hello from wine\"}]}' \
		http://127.0.0.1:$WPORT/v1/chat/completions | grep -q '\"chat.completion\"'"
	kill "$WINPID" "$FAKEPID" 2>/dev/null || true
	win_stop
	check "wine: the uninstaller runs silently" "$WINE" "$APPDIR/uninstall.exe" /S
	for _ in $(seq 100); do [ -e "$APPDIR/omniroute.exe" ] || break; sleep 0.1; done
	check "wine: the uninstaller removed the programs" sh -c "! test -e '$APPDIR/omniroute.exe' && ! find '$WINEPREFIX/drive_c/users' -path '*Start Menu/Programs/OmniRoute*' | grep -q ."
	check "wine: the uninstaller kept the user's data" sh -c "find '$WINEPREFIX/drive_c/users' -path '*AppData/Roaming/omniroute/omniroute.db' | grep -q ."
	win_stop
else
	bad "wine64 or MinGW missing (apt-get install wine64 gcc-mingw-w64-x86-64-win32)"
fi

echo "package: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
