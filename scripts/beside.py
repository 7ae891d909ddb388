#!/usr/bin/python3
"""beside.sh LOG BACKGROUND FOREGROUND... (scripts/beside.sh runs this)

Run the shell command BACKGROUND at nice 19, its output into LOG, while
FOREGROUND runs as usual; then show LOG as BACKGROUND goes on, until it
ends.  `make test` runs the unit tests and the hostile inputs beside the
kernel builds: kbuild leaves a core idle in its single-threaded steps
(the configuration, the link of vmlinux), and a nice-19 process mostly
takes that; not only that: measured cold, the tests cost the seeds
kbuild ~50 s and took 78 s off make test's path (docs/history.md,
2026-12-06; issue #23).  Warm, the kernels are up to date in seconds and
BACKGROUND runs on its own as before.

Exit status: FOREGROUND's when it failed, else BACKGROUND's; 2 for bad
usage; 130 on Ctrl-C or SIGTERM, after FOREGROUND, BACKGROUND and
everything BACKGROUND started (its own session, which Ctrl-C does not
reach) are ended.  LOG is kept in every case.

No Ctrl-C is lost (issue #33).  This was a bash script, and bash can lose
one: run as a foreground command, bash waits for the child to end and
then lets a Ctrl-C go unless the child died of it, and a Ctrl-C that came
while bash forked the child reached the child before its exec, while it
was still a copy of the script, and was lost (3 to 8 of 80 tries a
millisecond apart); run with `&` and the `wait` builtin, a Ctrl-C that
came just before `wait` blocked waited for the child to end (1 to 6 of
300).  Here SIGINT, SIGTERM and SIGCHLD are blocked before Python starts
(beside.sh) and taken with sigwaitinfo(), so each one is seen, whenever
it comes; the children start with posix_spawn(), which sets their
signals to their defaults and unblocks them only in the child, so a
child never runs this program's handling of a signal
(docs/reliability.md).
"""
import signal
import sys

# beside.sh starts this with SIGINT, SIGTERM and SIGCHLD blocked already
# (env --block-signal): a Ctrl-C waits for sigwaitinfo(), whenever it
# comes, and Python never sees one.  Blocked here too, for a start
# without beside.sh.  Python's SIGINT handler is left as it is: replaced,
# a SIGINT it had been given but not yet acted on would be dropped.  A
# signal ignored when this program started (make run in the background)
# stays ignored, as in a shell, for this program and for FOREGROUND.
STOP = {s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) != signal.SIG_IGN}
signal.pthread_sigmask(signal.SIG_BLOCK, STOP | {signal.SIGCHLD})

import os  # noqa: E402  (after the signals are blocked)

# Python ignores SIGPIPE and SIGXFSZ; the children get them at their
# defaults, as from a shell.
RESTORED = (signal.SIGPIPE, signal.SIGXFSZ)
# The background also gets SIGINT and SIGQUIT at their defaults, whatever
# this program was started with: the unit tests send SIGINT.
BACKGROUND_DEFAULTS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM) + RESTORED


def say(text: str, stream=sys.stdout) -> None:
    print(f"beside: {text}", file=stream, flush=True)


def die(text: str) -> None:
    say(text, sys.stderr)
    sys.exit(2)


def exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def autogroup_nice(pid: int, nice: int) -> None:
    """Set the nice value of PID's scheduler autogroup, where the kernel has
    them (CONFIG_SCHED_AUTOGROUP, on in Debian's kernels, sysctl
    kernel.sched_autogroup_enabled).  A new session is a new autogroup, and
    the CFS shares CPU between autogroups by their own nice value, not by
    their tasks': a nice-19 session of its own gets as much CPU as the
    kernel build beside it, unless its group is niced too.  Raising it
    needs no privilege; where there are no autogroups this does nothing."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    except OSError:
        pass


def reaped(pid: int) -> int | None:
    """PID's exit status (a shell's: 128 + N for signal N) once it ended."""
    done, status = os.waitpid(pid, os.WNOHANG)
    return exit_code(status) if done else None


class Beside:
    def __init__(self, log: str, background: str, foreground: list[str]):
        self.log, self.background, self.foreground = log, background, foreground
        self.bg = self.fg = 0
        self.bg_status: int | None = None
        self.fg_status: int | None = None

    def start(self) -> None:
        # Its own session (pytest-xdist starts workers: one kill reaches
        # all of it), at nice 19 (and so is its session's autogroup), its input
        # from /dev/null.
        self.bg = os.posix_spawnp(
            "nice", ["nice", "-n", "19", "bash", "-c", self.background], os.environ,
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_OPEN, 1, self.log,
                           os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666),
                          (os.POSIX_SPAWN_DUP2, 1, 2)],
            setsid=True, setsigdef=BACKGROUND_DEFAULTS, setsigmask=())
        # posix_spawn() returns after the child's setsid() and exec, so its
        # autogroup exists; whatever it starts later stays in it.
        autogroup_nice(self.bg, 19)
        say(f"'{self.background}' runs beside this at nice 19 (pid {self.bg}), "
            f"output in {self.log}")
        # In this process group, which Ctrl-C reaches, with this program's
        # input and output.
        try:
            self.fg = os.posix_spawnp(self.foreground[0], self.foreground, os.environ,
                                      setsigdef=tuple(STOP) + RESTORED, setsigmask=())
        except OSError as e:
            say(f"{self.foreground[0]}: {e.strerror}", sys.stderr)
            self.fg_status = 127 if isinstance(e, FileNotFoundError) else 126

    def take(self, info) -> None:
        """What sigwaitinfo() or sigtimedwait() gave."""
        if info is not None and info.si_signo in STOP:
            self.stop(info.si_signo)
        if self.fg and self.fg_status is None:
            self.fg_status = reaped(self.fg)
        if self.bg_status is None:
            self.bg_status = reaped(self.bg)

    def stop(self, sig: int) -> None:
        """FOREGROUND gets the signal too (it may have had it already),
        BACKGROUND's session SIGTERM; both waited for."""
        if self.fg and self.fg_status is None:
            os.kill(self.fg, sig)
            os.waitpid(self.fg, 0)
        if self.bg_status is None:
            for kill, pid in ((os.killpg, self.bg), (os.kill, self.bg)):
                try:
                    kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            os.waitpid(self.bg, 0)
        say(f"stopped; '{self.background}' ended, its output so far in {self.log}", sys.stderr)
        sys.exit(130)

    def run(self) -> int:
        waited = STOP | {signal.SIGCHLD}
        self.start()
        self.take(None)
        while self.fg_status is None:
            self.take(signal.sigwaitinfo(waited))
        say(f"{self.foreground[0]} ... ended with status {self.fg_status}; "
            f"'{self.background}' so far and until it ends:")
        # The log from its start, followed until the background has ended
        # (what tail -s 0.2 --pid -f did).
        out = sys.stdout.buffer
        with open(self.log, "rb") as log:
            while True:
                data = log.read(1 << 16)
                if data:
                    out.write(data)
                    out.flush()
                elif self.bg_status is not None:
                    break
                else:
                    self.take(signal.sigtimedwait(waited, 0.2))
        say(f"'{self.background}' ended with status {self.bg_status} "
            f"(output kept in {self.log})")
        return self.fg_status or self.bg_status


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        die("usage: beside.sh LOG BACKGROUND-COMMAND FOREGROUND-COMMAND [ARG...]")
    log, background, foreground = argv[0], argv[1], argv[2:]
    if not background:
        die("empty background command")
    try:
        os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    except OSError:
        die(f"cannot make the folder of {log}")
    try:
        open(log, "wb").close()
    except OSError:
        die(f"cannot write {log}")
    return Beside(log, background, foreground).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
