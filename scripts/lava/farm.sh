#!/bin/bash
# farm.sh BUILD INITRAMFS RESULTS SUITE [KERNEL-IMAGE]
#
# A LAVA farm on this machine for one run, then gone: Debian's lava-server
# (gunicorn, the scheduler) on a PostgreSQL cluster of its own, two
# lava-worker instances with one qemu device each, the kernels and the
# initramfs published over HTTP; SUITE's jobs submitted with lavacli, their
# results pulled back through LAVA's REST API and printed as `usercopy-lab
# run` prints its table, and compared with `usercopy-lab match` on the
# consoles LAVA kept and (without KERNEL-IMAGE) with our runner's verdicts
# (OURS=RUN_DIR: a finished run that has SUITE, else one is booted first).
#
# Every service listens on 127.0.0.1 only, on ports picked free at start.
# Nothing is loaded into this machine's kernel: the jobs' qemu device runs
# QEMU under TCG (job context no_kvm: no -enable-kvm, no /dev/kvm) with
# user-mode networking (-net user: no tap device, no bridge).  Every
# process runs from this script and is stopped by it (tear-down on any
# exit, Ctrl-C and SIGTERM included); every file it makes is under one
# folder it removes (FARM_KEEP=1 keeps it, for a post-mortem), except the
# run's results in RESULTS/lava-farm-SUITE-TIME/, the workers' dispatcher
# configs lava-server 2023.01 can only keep in /etc/lava-server/
# dispatcher.d/NAME/ (removed at tear-down) and what the Debian packages
# leave: see docs/lava.md.  A farm killed with SIGKILL cannot tear itself
# down: the next run stops what it left running and removes its files.  Needs root (lava-run refuses
# otherwise) and the packages lava-server, lava-dispatcher, lavacli and
# postgresql (installed if missing, maintainer scripts kept from loading
# kernel modules: scripts/lava/apt-install.sh).
set -euo pipefail

[ $# -eq 4 ] || [ $# -eq 5 ] ||
	{ echo "usage: $0 BUILD INITRAMFS RESULTS SUITE [KERNEL-IMAGE]" >&2; exit 2; }
build=$(realpath "$1")
initramfs=$(realpath "$2")
results=$3
suite=$4
other=${5:-}
lab=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$lab/harness${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-/usr/bin/python3}
workers=${FARM_WORKERS:-2}
t0=$SECONDS

die() { echo "lava-farm: $*" >&2; exit 2; }
say() { echo "lava-farm: [$((SECONDS - t0))s] $*"; }
[ "$(id -u)" = 0 ] || die "needs root (lava-run refuses to run otherwise)"
[ -f "$initramfs" ] || die "$initramfs missing (make initramfs)"
[[ $workers =~ ^[1-9]$ ]] || die "FARM_WORKERS=$workers: want 1 to 9"
kernel=$("$lab/usercopy-lab" suite-kernel "$suite") || exit 2
if [ -n "$other" ]; then
	[ -f "$other" ] || die "$other: no such kernel image"
	other=$(realpath "$other")
else
	[ -f "$build/kernel-$kernel/arch/x86/boot/bzImage" ] ||
		die "$build/kernel-$kernel/arch/x86/boot/bzImage missing (make kernel KERNEL=$kernel)"
fi
"$lab/scripts/lava/apt-install.sh" lava-server lava-dispatcher lavacli postgresql curl

pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || die "no PostgreSQL server binaries under /usr/lib/postgresql"

# shellcheck source=scripts/lava/procs.sh
. "$lab/scripts/lava/procs.sh"
# shellcheck source=scripts/lava/judge.sh
. "$lab/scripts/lava/judge.sh"
# shellcheck source=scripts/lava/worker.sh
. "$lab/scripts/lava/worker.sh"
dispatcher_d=/etc/lava-server/dispatcher.d
lava_tmp=/var/lib/lava/dispatcher/tmp

# reap DIR [OWNER]: stop and remove what the farm in DIR started and wrote:
# its PostgreSQL, the daemons it recorded (if still the same processes) and
# everything they started, any process naming DIR or the farm's download
# folders (lava-run and QEMU, whose worker may be gone), its workers'
# dispatcher configs and download folders.  OWNER: the farm's script, when
# it is this one (its descendants go too).  DIR itself is left to the caller.
reap() {
	local dir=$1 owner=${2:-} prefix="" pid start name roots=() victims=()
	[ ! -f "$dir/prefix" ] || prefix=$(cat "$dir/prefix")
	if [ -f "$dir/pg/postmaster.pid" ]; then
		runuser -u postgres -- timeout 60 "$pgbin/pg_ctl" -D "$dir/pg" -m fast -w stop \
			>/dev/null 2>&1 || true
	fi
	if [ -f "$dir/pids" ]; then
		while read -r pid start; do
			[ "$(proc_start "$pid")" != "$start" ] || roots+=("$pid")
		done < "$dir/pids"
	fi
	mapfile -t victims < <(run_pids "${roots[*]} $owner" \
		"$dir/"$'\n'"${prefix:+$lava_tmp/$prefix}")
	stop_pids "${roots[@]}" "${victims[@]}"
	if [ -f "$dir/workers" ]; then
		while read -r name; do
			[ -z "$name" ] || rm -rf "${dispatcher_d:?}/$name"
		done < "$dir/workers"
	fi
	[ -z "$prefix" ] || rm -rf "${lava_tmp:?}/$prefix"*
}

# A farm killed before its tear-down (SIGKILL, a crash) left its folder:
# its owner is gone (or, from before owners were recorded, the folder is
# older than a minute); one kept with FARM_KEEP is only a post-mortem.
for old in /tmp/usercopy-lab-farm.*; do
	[ -d "$old" ] && [ ! -e "$old/kept" ] || continue
	if [ -f "$old/owner" ]; then
		read -r pid start < "$old/owner"
		[ "$(proc_start "$pid")" != "$start" ] || continue
	elif [ $(($(date +%s) - $(stat -c %Y "$old"))) -lt 60 ]; then
		continue
	fi
	say "$old: left by a farm that did not tear down; stopping and removing what it left"
	reap "$old"
	rm -rf "$old"
done

mkdir -p "$results"
out=$(realpath "$results")/lava-farm-$suite${other:+-on-other-kernel}-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
farm=$(mktemp -d /tmp/usercopy-lab-farm.XXXXXX)
echo "$$ $(proc_start $$)" > "$farm/owner"
chmod 755 "$farm"
# Tokens (the admin's, the workers'), each a file of mode 0600 in a folder
# only root enters, never an argument (worker.sh); gone at tear-down.
secrets=$farm/secrets
(umask 077 && mkdir "$secrets")
prefix="usercopy-lab-farm-$$-"
echo "$prefix" > "$farm/prefix"

# ---------------------------------------------------------------- tear-down
teardown() {
	local rc=$?
	set +e
	trap - INT TERM
	say "tearing down"
	reap "$farm" $$
	rm -rf "$secrets"
	cp -r "$farm/log" "$out/farm-logs" 2>/dev/null
	say "the farm's folder held $(du -sh "$farm" 2>/dev/null | cut -f1) at the end"
	if [ -n "${FARM_KEEP:-}" ]; then
		touch "$farm/kept"
		say "kept $farm (FARM_KEEP)"
	else
		rm -rf "$farm"
	fi
	say "done in $((SECONDS - t0)) s; results in $out; exit $rc"
	exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# record PID: a daemon of the farm, with its start time (see reap).
record() { echo "$1 $(proc_start "$1")" >> "$farm/pids"; }

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
secret() { "$py" -c 'import secrets; print(secrets.token_hex(20))'; }
# wait_for WHAT CMD...: poll until CMD succeeds (60 s).
wait_for() {
	local what=$1 _
	shift
	for _ in $(seq 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
	die "$what did not come up (logs: $farm/log)"
}

mkdir -p "$farm/log" "$farm/server" "$farm/www"
chown lavaserver:lavaserver "$farm/server"
chmod 777 "$farm/log"

# ---------------------------------------------------------------- PostgreSQL
say "PostgreSQL: a cluster of its own in $farm/pg, 127.0.0.1 only"
pg_port=$(free_port)
db_pass=$(secret)
mkdir -p "$farm/pg" "$farm/pgsock"
chown postgres:postgres "$farm/pg" "$farm/pgsock"
runuser -u postgres -- "$pgbin/initdb" -D "$farm/pg" --auth-local=peer \
	--auth-host=scram-sha-256 -E UTF-8 --locale=C.UTF-8 > "$farm/log/initdb.log"
runuser -u postgres -- "$pgbin/pg_ctl" -D "$farm/pg" -l "$farm/log/postgresql.log" -w \
	-o "-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories=$farm/pgsock" \
	start > /dev/null
# The statements on psql's standard input: the password in no argument.
runuser -u postgres -- psql -q -h "$farm/pgsock" -p "$pg_port" -d postgres -v ON_ERROR_STOP=1 <<EOF
CREATE ROLE lavaserver LOGIN PASSWORD '$db_pass';
CREATE DATABASE lavaserver OWNER lavaserver ENCODING 'UTF8' TEMPLATE template0;
EOF

# ---------------------------------------------------------------- lava-server
# Configured by environment only: nothing under /etc/lava-server changes.
web_port=$(free_port)
settings=$(DB_PASS=$db_pass "$py" - "$farm" "$pg_port" <<'EOF'
import base64, json, os, sys
farm, port = sys.argv[1:]
password = os.environ["DB_PASS"]
print(base64.b64encode(json.dumps({
    "DATABASES": {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "lavaserver",
                              "USER": "lavaserver", "PASSWORD": password,
                              "HOST": "127.0.0.1", "PORT": port}},
    "DEVICES_PATH": f"{farm}/server/devices",
    "DEVICE_TYPES_PATHS": [f"{farm}/server/device-types", "/usr/share/lava-server/device-types"],
    "HEALTH_CHECKS_PATH": f"{farm}/server/health-checks",
    "DISPATCHER_CONFIG_PATH": f"{farm}/server/dispatcher.d",
    "MEDIA_ROOT": f"{farm}/server/media",
    "DJANGO_LOGFILE": f"{farm}/log/django.log",
    "ALLOWED_HOSTS": ["127.0.0.1", "localhost"],
    "WORKER_AUTO_REGISTER": False,
}).encode()).decode())
EOF
)
secret_key=$(secret)
export LAVA_JSON_SETTINGS=$settings SECRET_KEY=$secret_key DJANGO_SETTINGS_MODULE=lava_server.settings.prod
(umask 022; mkdir -p "$farm/server"/{devices,device-types,health-checks,dispatcher.d,media})
chown -R lavaserver:lavaserver "$farm/server"
# As the lavaserver user, in the farm's folder.  Run in the background,
# the function is a subshell of this script with the daemon its child: the
# pid recorded is that subshell's, and reap stops it and its descendants.
as_lava() { env -C "$farm" setpriv --reuid=lavaserver --regid=lavaserver --init-groups -- "$@"; }
say "lava-server: database migrations"
waited as_lava lava-server manage migrate --noinput > "$farm/log/migrate.log" 2>&1 ||
	die "lava-server manage migrate failed (see $farm/log/migrate.log)"
# The admin's password and token are made by lava-server and read from
# its standard output (the password, never used, is dropped).
as_lava lava-server manage users add admin --superuser --staff > /dev/null 2> "$farm/log/users.log"
admin_token=$(as_lava lava-server manage tokens add --user admin \
	--description "usercopy-lab farm" 2>> "$farm/log/users.log")
[[ $admin_token =~ ^[[:alnum:]]+$ ]] || die "lava-server made no admin token (see $farm/log/users.log)"
secret_file "$secrets/admin.token" "$admin_token"
secret_file "$secrets/admin.header" "Authorization: Token $admin_token"
as_lava gunicorn3 lava_server.wsgi --bind "127.0.0.1:$web_port" --workers 4 --timeout 300 \
	--log-file "$farm/log/gunicorn.log" > "$farm/log/gunicorn.out" 2>&1 &
record $!
as_lava lava-server manage lava-scheduler --level DEBUG \
	--log-file "$farm/log/lava-scheduler.log" > "$farm/log/lava-scheduler.out" 2>&1 &
record $!
url="http://127.0.0.1:$web_port"
wait_for "lava-server at $url" curl -sf "$url/api/v0.2/system/version/"
say "lava-server $(curl -s "$url/api/v0.2/system/version/") at $url (PostgreSQL at 127.0.0.1:$pg_port)"

# ---------------------------------------------------------------- artifacts
# The files LAVA downloads, over HTTP on loopback: links to BUILD's kernels
# and the initramfs (nothing is copied; QEMU reads its own copy).
http_port=$(free_port)
ln -s "$build" "$farm/www/build"
ln -s "$initramfs" "$farm/www/initramfs.cpio"
[ -z "$other" ] || ln -s "$other" "$farm/www/other-bzImage"
env -C "$farm/www" "$py" -m http.server --bind 127.0.0.1 "$http_port" \
	> "$farm/log/http.log" 2>&1 &
record $!
files="http://127.0.0.1:$http_port"
wait_for "the HTTP server" curl -sfI "$files/initramfs.cpio"

# ---------------------------------------------------------------- farm setup
# lavacli's identity in a config of its own (lavacli reads
# $XDG_CONFIG_HOME/lavacli.yaml): the server's address, the admin's token,
# and a timeout longer than lavacli's 20 s, which a loaded 2-core machine
# exceeds when it validates a job.
secret_file "$secrets/lavacli.yaml" "$(printf 'farm:\n  uri: http://127.0.0.1:%s/RPC2\n  username: admin\n  token: %s\n  timeout: 300\n' \
	"$web_port" "$admin_token")"
lavacli() { XDG_CONFIG_HOME="$secrets" command lavacli -i farm "$@"; }
# api PATH FIELD: a field of a REST API answer (as the admin: a worker's
# token); curl reads the admin's header from its file.
api() {
	curl -sf -H @"$secrets/admin.header" "$url/api/v0.2/$1" |
		"$py" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
lavacli device-types add qemu
# dispatcher_ip: the QEMU boot action asks for the dispatcher's address;
# prefix: where this run's jobs download to under /var/lib/lava/dispatcher/tmp.
printf 'dispatcher_ip: 127.0.0.1\nprefix: %s\n' "$prefix" > "$farm/dispatcher.yaml"
printf "{%% extends 'qemu.jinja2' %%}\n" > "$farm/qemu.jinja2"
names=()
for w in $(seq "$workers"); do
	# The worker's dispatcher config goes to $dispatcher_d/NAME/ (lava-server
	# 2023.01 has that path built in): a name of this run's, removed at the end.
	name=lab-$$-worker-$w
	[ ! -e "$dispatcher_d/$name" ] || die "$dispatcher_d/$name exists: not this farm's"
	echo "$name" >> "$farm/workers"
	names+=("$name")
	lavacli workers add "$name" --description "usercopy-lab farm on 127.0.0.1"
	lavacli workers config set "$name" "$farm/dispatcher.yaml"
	lavacli devices add --type qemu --worker "$name" "qemu-0$w"
	lavacli devices dict set "qemu-0$w" "$farm/qemu.jinja2"
	lavacli devices update --health GOOD "qemu-0$w"
	token=$(api "workers/$name/" token)
	secret_file "$secrets/$name.token" "$token"
	mkdir -p "$farm/$name"
	start_worker "$name" "$url" "$secrets/$name.token" "$farm/$name" "$farm/log"
	record $!
done
online() { [ "$(api "workers/$1/" state)" = Online ]; }
for name in "${names[@]}"; do wait_for "$name" online "$name"; done
say "$workers workers online, one qemu device each"

# ---------------------------------------------------------------- the suite
args=(--kernels "$files/build" --initramfs "$files/initramfs.cpio")
[ -z "$other" ] || args+=(--kernel "$files/other-bzImage")
"$py" -m usercopy_lab lava write --out "$out/jobs" --suite "$suite" "${args[@]}"
jobs=("$out/jobs/$suite"/*.yaml)
submitted=$SECONDS
: > "$out/job-ids.txt"
for job in "${jobs[@]}"; do
	id=$(lavacli jobs submit "$job") && [[ $id =~ ^[0-9]+$ ]] ||
		die "lavacli could not submit $job: $id"
	echo "$id" >> "$out/job-ids.txt"
done
say "submitted ${#jobs[@]} jobs with lavacli ($(head -1 "$out/job-ids.txt")..$(tail -1 "$out/job-ids.txt"))"
status=0
waited "$py" -m usercopy_lab lava fetch --server "$url" \
	--token-file "$secrets/admin.token" \
	--jobs "$out/job-ids.txt" --out "$out" --json "$out/lava-results.json" \
	> "$out/lava-table.txt" 2> >(tee "$out/fetch.log" >&2) || status=$?
[ "$status" -le 1 ] || { cat "$out/fetch.log" >&2; die "could not fetch the results"; }
echo "LAVA's own verdicts (from lava-server's results API), $((SECONDS - submitted)) s after submitting:"
cat "$out/lava-table.txt"
ours=
if [ -z "$other" ]; then
	if [ -n "${OURS:-}" ]; then
		run=$(realpath "$OURS")
	else
		rc=0
		waited "$lab/usercopy-lab" run --suite "$suite" --accel tcg --build-dir "$build" \
			--initramfs "$initramfs" --results "$results" > "$out/ours.txt" || rc=$?
		[ "$rc" -le 1 ] || die "our runner could not run suite $suite (exit $rc)"
		run=$(realpath "$results/latest")
	fi
	ours=$run/results.json
fi
status=0
judge "$suite" "$out" "$ours" || status=$?
[ ! -f "$out/compare.txt" ] || { grep DIFFERENT "$out/compare.txt" || true; tail -2 "$out/compare.txt"; }
exit "$status"
