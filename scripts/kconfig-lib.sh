# shellcheck shell=bash
# kconfig-lib.sh - sourced by kernel-config.sh and series-check.sh

# check_fragments PREFIX CONFIG SYMBOLS FRAGMENT...
#
# merge_config.sh silently drops options whose dependencies are unmet: check
# that every CONFIG_ line of the FRAGMENTs landed in CONFIG.  The last
# fragment naming an option wins, as in merge_config.sh; "CONFIG_X=n" and
# "# CONFIG_X is not set" both mean off.  SYMBOLS, when not empty, is a file
# of the CONFIG_ names the tree defines: options it lacks (added by a later
# patch of a series) are skipped and listed on stdout.  Every option that
# did not land is named on stderr, each line starting with PREFIX; returns 1
# if there was one.
check_fragments() {
	local prefix=$1 config=$2 symbols=$3 opt line frag bad=0 skipped=() wanted
	shift 3
	# Read everything first: a failure inside the loop's input (a process
	# substitution) would be lost, and a missing fragment would then check
	# nothing and pass.
	for frag in "$config" "$@"; do
		[ -f "$frag" ] && [ -r "$frag" ] ||
			{ echo "${prefix}$frag: no such file" >&2; return 1; }
	done
	wanted=$(for f in "$@"; do
		sed -n -e "s|^\(CONFIG_[A-Za-z0-9_]*\)=.*|\1\t&\t$f|p" \
			-e "s|^# \(CONFIG_[A-Za-z0-9_]*\) is not set|\1\t&\t$f|p" "$f" || exit 1
	done | awk -F'\t' '{ last[$1] = $0; order[$1] = NR }
		END { for (k in last) print order[k] "\t" last[k] }' | sort -n | cut -f2-) ||
		{ echo "${prefix}cannot read the fragments $*" >&2; return 1; }
	while IFS=$'\t' read -r opt line frag; do
		[ -n "$opt" ] || continue
		if [ -n "$symbols" ] && ! grep -qxF "$opt" "$symbols"; then
			skipped+=("$opt")
			continue
		fi
		case "$line" in
		"# "* | *=n) ! grep -q "^$opt=" "$config" && continue ;;
		*) grep -qxF "$line" "$config" && continue ;;
		esac
		echo "$prefix$frag: '$line' did not land in .config (unmet dependency" \
			"or selected by another option?): got" \
			"'$(grep -E "^(# )?$opt[= ]" "$config" || echo absent)'" >&2
		bad=1
	done <<<"$wanted"
	[ "${#skipped[@]}" = 0 ] ||
		echo "${prefix}not defined in this tree yet, skipped: ${skipped[*]}"
	return $bad
}
