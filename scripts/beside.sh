#!/bin/sh
# beside.sh LOG BACKGROUND FOREGROUND...
#
# Run the shell command BACKGROUND at nice 19, its output into LOG, while
# FOREGROUND runs as usual; then show LOG as BACKGROUND goes on, until it
# ends (make test's unit tests beside the kernel builds).  The work is
# done by scripts/beside.py, which says how and why: a bash script could
# lose a Ctrl-C (issue #33).  env blocks SIGINT, SIGTERM and SIGCHLD
# before Python starts: Python's own start takes a Ctrl-C as a
# KeyboardInterrupt and may print it and go on (its check of the script
# path as a zip: 3 of 300 tries beside two busy loops), so Python must not
# see one; blocked, it waits for beside.py's sigwaitinfo().  A Ctrl-C
# before env has blocked it ends this (died of SIGINT) with nothing
# started.  -I -S: the shortest start (no site-packages, no PYTHON*
# variables).
exec env --block-signal=INT,TERM,CHLD /usr/bin/python3 -I -S "$(dirname -- "$0")/beside.py" "$@"
