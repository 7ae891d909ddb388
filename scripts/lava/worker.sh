# shellcheck shell=bash
# worker.sh: sourced by farm.sh.  The farm's secrets never on a command
# line (ps shows any process's arguments to every user): each is a file of
# its own in a folder only root enters, mode 0600 from the moment the file
# exists, and the program is told the file.

# secret_file FILE VALUE: VALUE (no newline) into FILE, made under umask
# 077.  printf is a builtin and a function is no new process: VALUE is in
# no process's arguments.
secret_file() {
	(umask 077 && rm -f -- "$1" && printf '%s' "$2" > "$1")
}

# start_worker NAME URL TOKEN-FILE DIR LOG-DIR: lava-worker NAME in the
# background ($! is its pid), for the server at URL, its token read from
# TOKEN-FILE.  lava-worker --token-file (lava-dispatcher 2023.01, worker.py):
# an existing file is read once at start, its trailing newline dropped;
# without the option it reads DIR/token, and with --token it writes the
# token there itself (mode 0600) but the token stays in its arguments.
start_worker() {
	local name=$1 url=$2 token_file=$3 dir=$4 log=$5
	[ -s "$token_file" ] || { echo "lava-farm: $token_file: no token for $name" >&2; return 2; }
	lava-worker --name "$name" --url "$url/" --token-file "$token_file" --worker-dir "$dir" \
		--ping-interval 2 --level INFO --log-file "$log/$name.log" > "$log/$name.out" 2>&1 &
}
