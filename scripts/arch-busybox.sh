#!/bin/bash
# arch-busybox.sh DEBARCH OUT
#
# Debian's static busybox for another architecture (DEBARCH: a Debian
# architecture, i386 or arm64), extracted from its package into OUT for
# the initramfs of that arch's guests (make initramfs-ARCH).  busybox-static
# is not co-installable across architectures (each owns /bin/busybox), so
# the package is downloaded (apt-get download) and unpacked, not installed;
# apt needs DEBARCH as a foreign architecture for that (dpkg
# --add-architecture, once, as root).  OUT.version records the package
# version; an OUT of the candidate version is kept.
set -euo pipefail

arch=$1
out=$2
pkg="busybox-static:$arch"

if ! dpkg --print-foreign-architectures | grep -qxF "$arch"; then
	[ "$(id -u)" = 0 ] ||
		{ echo "arch-busybox: $arch is not a dpkg architecture here; as root: dpkg --add-architecture $arch && apt-get update" >&2; exit 1; }
	echo "arch-busybox: adding $arch as a foreign dpkg architecture"
	dpkg --add-architecture "$arch"
	apt-get update -q
fi
version=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
	apt-get update -q
	version=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
fi
[ -n "$version" ] && [ "$version" != "(none)" ] ||
	{ echo "arch-busybox: apt knows no $pkg" >&2; exit 1; }
if [ -x "$out" ] && [ "$(cat "$out.version" 2>/dev/null)" = "$version" ]; then
	echo "arch-busybox: $out is $pkg $version"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q "$pkg=$version" >/dev/null 2>&1) ||
	{ echo "arch-busybox: apt-get download $pkg=$version failed" >&2; exit 1; }
deb=$(find "$work" -maxdepth 1 -name 'busybox-static_*.deb' -print -quit)
[ -n "$deb" ] || { echo "arch-busybox: no .deb from apt-get download $pkg" >&2; exit 1; }
dpkg-deb -x "$deb" "$work/root"
bin="$work/root/bin/busybox"
[ -f "$bin" ] || { echo "arch-busybox: $deb holds no /bin/busybox" >&2; exit 1; }
file "$bin" | grep -q 'statically linked' ||
	{ echo "arch-busybox: $bin is not static: $(file -b "$bin")" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
install -m 0755 "$bin" "$out.tmp"
mv "$out.tmp" "$out"
echo "$version" > "$out.version"
echo "arch-busybox: $out is $pkg $version ($(file -b "$out" | cut -d, -f1-2))"
