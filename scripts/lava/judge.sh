# shellcheck shell=bash
# judge.sh: sourced by run-suite.sh and farm.sh.  The end of a LAVA run of
# a suite, and so its exit status, decided in one place for both.
#
# judge SUITE OUT [OURS]: `usercopy-lab match` on the consoles LAVA kept
# (OUT/consoles/SUITE/*.log: OUT/match.txt, match.ktap, match-junit.xml),
# then `usercopy-lab lava compare` of LAVA's own verdicts (OUT/lava-results.json),
# match's and, with OURS, our runner's results.json (OUT/compare.txt).
# Returns the run's exit status:
#   0  every job has one verdict in every source, none FAIL or ERROR
#   1  every source agrees, and some job is FAIL or ERROR (as
#      `usercopy-lab run`'s 1: a wrong kernel, a regression)
#   2  the run could not be judged: match or compare could not run
#   3  some job's verdicts differ (LAVA's, match's, our runner's), or a
#      source has none for it; whatever the verdicts are
# Needs $lab (the repository) and $py (Python 3), the caller's.
# shellcheck disable=SC2154
judge() {
	local suite=$1 out=$2 ours=${3:-} rc=0 compare
	"$lab/usercopy-lab" match --suite "$suite" --ktap "$out/match.ktap" \
		--junit "$out/match-junit.xml" "$out/consoles/$suite"/*.log > "$out/match.txt" || rc=$?
	# 1: a console FAILs or ERRORs, a verdict compare weighs; more: none
	if [ "$rc" -gt 1 ]; then
		echo "lava: usercopy-lab match could not judge the consoles in $out/consoles/$suite (exit $rc)" >&2
		return 2
	fi
	compare=(--lava "$out/lava-results.json" --match "$out/match-junit.xml")
	[ -z "$ours" ] || compare+=(--ours "$ours")
	rc=0
	"$py" -m usercopy_lab lava compare --suite "$suite" "${compare[@]}" \
		> "$out/compare.txt" || rc=$?
	return "$rc"
}
