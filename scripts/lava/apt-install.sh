#!/bin/bash
# apt-install.sh PACKAGE...: installs whichever PACKAGEs are missing with
# apt-get (--no-install-recommends), so that no maintainer script loads a
# kernel module into this machine.
#
# lava-dispatcher depends on python3-guestfs -> libguestfs0, which pulls
# in fuse3 and mdadm; their postinst scripts run `modprobe fuse` and
# `modprobe md`.  While apt-get runs, a `modprobe` (and `insmod`) first on
# the PATH apt gives dpkg and its maintainer scripts (apt's DPkg::Path)
# only writes what it was asked to load to $LOG and succeeds; the real one
# is never run.  Installed packages
# stay installed (docs/lava.md lists what `make lava-farm` adds).
set -euo pipefail

log=${LOG:-/dev/stderr}
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || { echo "apt-install: need root to install: ${missing[*]}" >&2; exit 1; }

guard=$(mktemp -d)
trap 'rm -rf "$guard"' EXIT
cat > "$guard/modprobe" <<EOF
#!/bin/sh
echo "apt-install: a maintainer script asked for 'modprobe \$*'; not run" >> "$log"
exit 0
EOF
chmod 755 "$guard/modprobe"
cp "$guard/modprobe" "$guard/insmod"
echo "apt-install: installing ${missing[*]} (apt-get --no-install-recommends)"
export DEBIAN_FRONTEND=noninteractive
dpkg_path=$(apt-config shell P DPkg::Path | sed -n "s/^P='\(.*\)'$/\1/p")
apt-get update -q
apt-get -o DPkg::Path="$guard:${dpkg_path:-/usr/sbin:/usr/bin:/sbin:/bin}" install -y -q \
	--no-install-recommends "${missing[@]}"
