#!/bin/sh
# beside.sh LOG BACKGROUND FOREGROUND...
#
# Run the shell command BACKGROUND at nice 19, its output into LOG, while
# FOREGROUND runs as usual; then show LOG as BACKGROUND goes on, until it
# ends (make test's unit tests beside the kernel builds).  The work is
# done by scripts/beside.py, which says how and why: a bash script could
# lose a Ctrl-C (issue #33).  A Ctrl-C before beside.py has blocked it
# ends this (died of SIGINT, or status 1 and Python's KeyboardInterrupt
# when it came during Python's start) with nothing started; -I -S: the
# shortest start (no site-packages, no PYTHON* variables).
exec /usr/bin/python3 -I -S "$(dirname -- "$0")/beside.py" "$@"
