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
set -euo pipefail

SYZKALLER_URL=https://github.com/google/syzkaller
SYZKALLER_COMMIT=1e72964b0111319984575e60f266d1fa0a98abb5
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/build/corpora}
mkdir -p "$dest"

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

mkdir -p "$dest/mirrors"
python3 "$here/scripts/mail-corpus.py" build --clone --mirrors "$dest/mirrors" --out "$dest/mail" ||
	{ echo "fetch-corpora: mail corpus not built (no network?)" >&2; exit 1; }
