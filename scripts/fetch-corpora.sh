#!/bin/bash
# fetch-corpora.sh [DIR]: fetch the two triage corpora into DIR (default
# build/corpora), where the corpus tests and `make bench` look for them.
#
#   DIR/syzkaller-report  google/syzkaller's pkg/report/testdata/linux/report
#                         at the commit the counts of test_syzkaller_corpus.py
#                         were measured on (a sparse, blob-less fetch: ~2 MB)
#   DIR/mirrors/          bare clones of the 8 public-inbox list mirrors of
#                         harness/tests/testdata/mail-corpus/index.tsv
#                         (github.com/linux-mailinglist-archives/*, ~2 GB in all)
#   DIR/mail/             the 3777 labeled mails, written from the mirrors'
#                         commits by scripts/mail-corpus.py build (~30 MB)
#
# Needs git and a network that reaches github.com: it only works where the
# network allows (the lab's CI machine has no such network; there the tests
# say they were skipped).  Re-running fetches only what is missing.
#
# MIRRORS=DIR uses local git mirrors instead of the network: DIR/OWNER+NAME/repo
# (or DIR/NAME.git, DIR/NAME) for google/syzkaller and for each list mirror
# (e.g. MIRRORS=/work/.mirror where the mirrors were fetched beforehand).  The
# syzkaller corpus is then read out of the mirror at the same commit, and the
# mails are built from the mirrors where they are, without cloning.
set -euo pipefail

SYZKALLER_URL=https://github.com/google/syzkaller
SYZKALLER_COMMIT=1e72964b0111319984575e60f266d1fa0a98abb5
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/build/corpora}
mkdir -p "$dest"

local_git() { # local_git OWNER NAME: a git directory of that repository under $MIRRORS
	local c
	[ -n "${MIRRORS:-}" ] || return 1
	for c in "$MIRRORS/$1+$2/repo" "$MIRRORS/$2.git" "$MIRRORS/$2/.git" "$MIRRORS/$2"; do
		if git -C "$c" rev-parse --git-dir >/dev/null 2>&1; then echo "$c"; return 0; fi
	done
	return 1
}

if [ ! -d "$dest/syzkaller-report" ] && syz_git=$(local_git google syzkaller); then
	echo "fetch-corpora: syzkaller $SYZKALLER_COMMIT from the local mirror $syz_git"
	git -C "$syz_git" cat-file -e "$SYZKALLER_COMMIT^{commit}" ||
		{ echo "fetch-corpora: $syz_git lacks $SYZKALLER_COMMIT" >&2; exit 1; }
	tmp=$(mktemp -d "$dest/.syzkaller.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# the tree itself, not a pathspec: a partial mirror may lack other blobs
	mkdir "$tmp/report"
	git -C "$syz_git" archive "$SYZKALLER_COMMIT:pkg/report/testdata/linux/report" | tar -x -C "$tmp/report"
	mv "$tmp/report" "$dest/syzkaller-report"
	rm -rf "$tmp"
	trap - EXIT
fi
if [ ! -d "$dest/syzkaller-report" ]; then
	echo "fetch-corpora: syzkaller $SYZKALLER_COMMIT (pkg/report/testdata/linux/report)"
	tmp=$(mktemp -d "$dest/.syzkaller.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	git -C "$tmp" init --quiet
	git -C "$tmp" remote add origin "$SYZKALLER_URL"
	git -C "$tmp" sparse-checkout set pkg/report/testdata/linux/report
	git -C "$tmp" fetch --quiet --depth 1 --filter=blob:none origin "$SYZKALLER_COMMIT" ||
		{ echo "fetch-corpora: cannot fetch $SYZKALLER_URL (no network?)" >&2; exit 1; }
	git -C "$tmp" checkout --quiet FETCH_HEAD
	mv "$tmp/pkg/report/testdata/linux/report" "$dest/syzkaller-report"
	rm -rf "$tmp"
	trap - EXIT
fi
echo "fetch-corpora: syzkaller corpus: $(ls "$dest/syzkaller-report" | wc -l) files in $dest/syzkaller-report"

if [ -n "${MIRRORS:-}" ]; then
	mirror_args=(--mirrors "$MIRRORS")
else
	mkdir -p "$dest/mirrors"
	mirror_args=(--clone --mirrors "$dest/mirrors")
fi
python3 "$here/scripts/mail-corpus.py" build "${mirror_args[@]}" --out "$dest/mail" ||
	{ echo "fetch-corpora: mail corpus not built (no network?)" >&2; exit 1; }
