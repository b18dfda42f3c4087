#!/usr/bin/env bash
# Linux packages of OmniRoute, built with Debian's own tools (dpkg-deb,
# rpmbuild), nothing downloaded:
#
#   build/package.sh stage DIR   lay out the payload (bin/, share/, install.sh) in DIR
#                                from whichever binaries bin/ holds
#   build/package.sh all         bin/omniroute_<v>_<arch>.deb, bin/omniroute-<v>-1.<arch>.rpm
#                                and bin/omniroute-<v>-linux-<arch>.tar.gz (with install.sh);
#                                needs bin/omniroute and bin/omniroute-desktop (make package)
#
#   PACKAGE_FAST=1                   xz level 1 instead of the release levels (the .deb's 6, the
#                                    .rpm's 9): the same formats, files and metadata, a minute and
#                                    a half less CPU; make test-package builds so (releases do not)
#
# The payload: /usr/bin/omniroute (headless CLI and gateway) and
# /usr/bin/omniroute-desktop (window and tray), the menu entry, icons in every
# hicolor size and scalable, the AppStream metainfo, the man page, bash, zsh
# and fish completions, and the docs. The maintainer scripts only refresh the
# desktop and icon caches: a user's data directory is never touched.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VERSION=${VERSION:-$(cat VERSION)}
GOARCH=$(go env GOARCH 2>/dev/null || echo amd64)
case "$GOARCH" in
amd64) DEB_ARCH=amd64 RPM_ARCH=x86_64 ;;
arm64) DEB_ARCH=arm64 RPM_ARCH=aarch64 ;;
*) DEB_ARCH=$GOARCH RPM_ARCH=$GOARCH ;;
esac
ICON_SIZES="16 22 24 32 48 64 128 256 512"
# The xz levels: the release's, or level 1 for make test (PACKAGE_FAST=1).
DEB_XZ=(-Zxz) RPM_PAYLOAD=w9.xzdio
if [ "${PACKAGE_FAST:-}" = 1 ]; then DEB_XZ=(-Zxz -z1) RPM_PAYLOAD=w1.xzdio; fi

stage() {
	local dir=$1
	rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/share"
	local any=no
	for b in omniroute omniroute-desktop; do
		if [ -x "bin/$b" ]; then
			install -m 0755 "bin/$b" "$dir/bin/$b"
			any=yes
		fi
	done
	[ "$any" = yes ] || { echo "package.sh: no binary in bin/ (run make build)" >&2; exit 1; }
	local s=$dir/share
	install -D -m 0644 build/linux/omniroute.desktop "$s/applications/omniroute.desktop"
	for n in $ICON_SIZES; do
		install -D -m 0644 "build/linux/icons/hicolor/${n}x${n}/apps/omniroute.png" "$s/icons/hicolor/${n}x${n}/apps/omniroute.png"
	done
	install -D -m 0644 build/linux/icons/omniroute.svg "$s/icons/hicolor/scalable/apps/omniroute.svg"
	install -D -m 0644 build/linux/omniroute.metainfo.xml "$s/metainfo/io.omniroute.OmniRoute.metainfo.xml"
	mkdir -p "$s/man/man1"
	gzip -9n <build/linux/omniroute.1 >"$s/man/man1/omniroute.1.gz"
	chmod 0644 "$s/man/man1/omniroute.1.gz"
	install -D -m 0644 build/linux/completions/omniroute.bash "$s/bash-completion/completions/omniroute"
	install -D -m 0644 build/linux/completions/_omniroute "$s/zsh/vendor-completions/_omniroute"
	install -D -m 0644 build/linux/completions/omniroute.fish "$s/fish/vendor_completions.d/omniroute.fish"
	install -D -m 0644 README.md "$s/doc/omniroute/README.md"
	for d in docs/*.md; do install -D -m 0644 "$d" "$s/doc/omniroute/$(basename "$d")"; done
	install -D -m 0644 VERSION "$s/omniroute/VERSION"
	install -m 0755 build/linux/install.sh "$dir/install.sh"
}

deb() {
	local root=dist-pkg/deb
	rm -rf "$root" && mkdir -p "$root/usr" "$root/DEBIAN"
	cp -a dist-pkg/payload/bin dist-pkg/payload/share "$root/usr/"
	rm -f "$root/usr/share/omniroute/VERSION" && rmdir "$root/usr/share/omniroute"
	local size
	size=$(du -sk "$root/usr" | cut -f1)
	cat >"$root/DEBIAN/control" <<-EOF
		Package: omniroute
		Version: $VERSION
		Architecture: $DEB_ARCH
		Maintainer: OmniRoute <packages@omniroute.io>
		Installed-Size: $size
		Depends: libc6, libgtk-3-0 | libgtk-3-0t64, libwebkit2gtk-4.1-0, libayatana-appindicator3-1
		Section: devel
		Priority: optional
		Homepage: https://omniroute.io
		Description: local LLM gateway for AI coding agents
		 OmniRoute runs an LLM gateway on 127.0.0.1:20128 and routes every coding
		 agent's requests (Claude Code, Codex CLI, Cursor, Cline, opencode, aider,
		 Continue) across the user's provider accounts and API keys, moving on
		 when one hits a quota, is rate-limited, fails or stalls. omniroute is the
		 headless gateway and CLI; omniroute-desktop adds a window and a tray icon.
	EOF
	cat >"$root/DEBIAN/postinst" <<-'EOF'
		#!/bin/sh
		# Refreshes the menu and icon caches; never touches a user's data.
		set -e
		if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
		if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true; fi
		exit 0
	EOF
	cat >"$root/DEBIAN/postrm" <<-'EOF'
		#!/bin/sh
		# Refreshes the caches. Each user's data directory (~/.config/omniroute)
		# is theirs: neither remove nor purge deletes it.
		set -e
		if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
		if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true; fi
		if [ "$1" = purge ]; then
			echo "omniroute: each user's data (connections, keys, the database) stays in ~/.config/omniroute; remove that directory to forget it."
		fi
		exit 0
	EOF
	chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
	local out="bin/omniroute_${VERSION}_${DEB_ARCH}.deb"
	dpkg-deb --root-owner-group "${DEB_XZ[@]}" --build "$root" "$out" >/dev/null
	echo "$out"
}

rpm() {
	local top=$ROOT/dist-pkg/rpm
	rm -rf "$top" && mkdir -p "$top"/{BUILD,RPMS,SPECS,SRPMS,SOURCES}
	local files
	files=$(cd dist-pkg/payload && find bin share -type f ! -path share/omniroute/VERSION | sort | sed 's|^|/usr/|')
	cat >"$top/SPECS/omniroute.spec" <<-EOF
		Name: omniroute
		Version: $VERSION
		Release: 1
		Summary: Local LLM gateway for AI coding agents
		License: LicenseRef-proprietary
		URL: https://omniroute.io
		Requires: gtk3, webkit2gtk4.1, libayatana-appindicator-gtk3
		AutoReqProv: no
		%description
		OmniRoute runs an LLM gateway on 127.0.0.1:20128 and routes every coding
		agent's requests across the user's provider accounts and API keys, moving
		on when one hits a quota, is rate-limited, fails or stalls. omniroute is
		the headless gateway and CLI; omniroute-desktop adds a window and a tray.
		%install
		mkdir -p %{buildroot}/usr
		cp -a $ROOT/dist-pkg/payload/bin $ROOT/dist-pkg/payload/share %{buildroot}/usr/
		rm -rf %{buildroot}/usr/share/omniroute
		%post
		update-desktop-database -q /usr/share/applications >/dev/null 2>&1 || :
		gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor >/dev/null 2>&1 || :
		%postun
		update-desktop-database -q /usr/share/applications >/dev/null 2>&1 || :
		gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor >/dev/null 2>&1 || :
		%files
		$files
	EOF
	rpmbuild --quiet -bb --define "_topdir $top" --define "_build_id_links none" --define "__strip /bin/true" \
		--define "_binary_payload $RPM_PAYLOAD" --target "$RPM_ARCH" "$top/SPECS/omniroute.spec" >/dev/null 2>&1 ||
		rpmbuild -bb --define "_topdir $top" --define "_build_id_links none" --define "__strip /bin/true" --target "$RPM_ARCH" "$top/SPECS/omniroute.spec"
	local out="bin/omniroute-${VERSION}-1.${RPM_ARCH}.rpm"
	mv "$top/RPMS/$RPM_ARCH/omniroute-${VERSION}-1.${RPM_ARCH}.rpm" "$out"
	echo "$out"
}

tarball() {
	local name="omniroute-${VERSION}-linux-${GOARCH}"
	rm -rf "dist-pkg/$name" && cp -a dist-pkg/payload "dist-pkg/$name"
	local out="bin/$name.tar.gz"
	tar -C dist-pkg --owner=0 --group=0 -czf "$out" "$name"
	echo "$out"
}

case "${1:-all}" in
stage) stage "${2:?stage DIR}" ;;
all)
	for b in omniroute omniroute-desktop; do
		[ -x "bin/$b" ] || { echo "package.sh: bin/$b is missing (make package builds both)" >&2; exit 1; }
	done
	stage dist-pkg/payload
	deb
	if command -v rpmbuild >/dev/null; then rpm; else echo "package.sh: rpmbuild missing (apt-get install rpm): no .rpm" >&2; fi
	tarball
	;;
*) echo "usage: build/package.sh [all | stage DIR]" >&2; exit 2 ;;
esac
