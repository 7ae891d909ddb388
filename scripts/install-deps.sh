#!/bin/bash
# install-deps.sh [--only] [PACKAGE...]: installs, via apt, whatever the lab
# needs and is missing, and the extra PACKAGEs (make lava: lava-common); with
# --only, just the PACKAGEs (make unit-test).  Needs root or sudo only when
# something is missing.
set -euo pipefail

pkgs=(linux-source-6.1 qemu-system-x86 qemu-utils busybox-static python3 python3-pexpect
      python3-pytest python3-hypothesis python3-yaml expect ccache gcc make bc bison flex
      libelf-dev libssl-dev cpio xz-utils patch git file perl binutils libc6-dev
      xfsprogs python3-pyelftools python3-jinja2 python3-matplotlib chromium python3-tabulate
      python3-psutil python3-jsonschema)
if [ "${1:-}" = --only ]; then
	shift
	pkgs=()
fi
pkgs+=("$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
