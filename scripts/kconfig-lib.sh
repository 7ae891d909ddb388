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
	local prefix=$1 config=$2 symbols=$3 opt line frag bad=0 skipped=()
	shift 3
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
	done < <(for f in "$@"; do
		sed -n -e "s|^\(CONFIG_[A-Za-z0-9_]*\)=.*|\1\t&\t$f|p" \
			-e "s|^# \(CONFIG_[A-Za-z0-9_]*\) is not set|\1\t&\t$f|p" "$f"
	done | awk -F'\t' '{ last[$1] = $0; order[$1] = NR }
		END { for (k in last) print order[k] "\t" last[k] }' | sort -n | cut -f2-)
	[ "${#skipped[@]}" = 0 ] ||
		echo "${prefix}not defined in this tree yet, skipped: ${skipped[*]}"
	return $bad
}
