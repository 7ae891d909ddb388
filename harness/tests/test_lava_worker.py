"""scripts/lava/worker.sh: the farm's lava-workers get their tokens from
files, never on their command line (which `ps` shows every user).

1. start_worker with a stand-in lava-worker that records its own
   /proc/PID/cmdline (what ps reads): no token in it, --token-file names
   the file, and the file holds the token, mode 0600 whatever the umask;
2. the real lava-worker (lava-dispatcher, where installed) started the same
   way against a stand-in server: the token it sends (its LAVA-Token
   header) is the file's, and its command line holds none;
3. `usercopy-lab lava fetch --token-file` (the farm reading its results back)
   sends the file's token.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from processes import end_tree

WORKER_SH = Path(__file__).resolve().parents[2] / "scripts" / "lava" / "worker.sh"
TOKEN = "k2j4h5g6f7d8s9a0qwertyuiopzxcvbnm0123456789abcdefghijklmnopqrstuv"

FAKE_WORKER = """#!/bin/bash
# lava-worker's stand-in: what ps would show of it, and the token file's mode
tr '\\0' '\\n' < /proc/$$/cmdline > "$FAKE_WORKER_OUT/cmdline"
"""


def bash(script: str, tmp_path: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f'set -euo pipefail; . "{WORKER_SH}"; {script}'],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, **(env or {})}, check=False)


def secrets_dir(tmp_path: Path) -> Path:
    secrets = tmp_path / "secrets"
    secrets.mkdir(mode=0o700)
    return secrets


def test_the_workers_command_line_holds_no_token_and_the_file_does(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lava-worker").write_text(FAKE_WORKER)
    (bin_dir / "lava-worker").chmod(0o755)
    token_file = secrets_dir(tmp_path) / "lab-1-worker-1.token"
    # a world-readable file of that name already there: replaced, not reused
    token_file.write_text("old")
    token_file.chmod(0o644)
    (tmp_path / "log").mkdir()
    out = bash(f'umask 000; secret_file "{token_file}" "$TOKEN"; '
               f'start_worker lab-1-worker-1 http://127.0.0.1:9 "{token_file}" '
               f'"{tmp_path}/w" "{tmp_path}/log"; wait $!',
               tmp_path, {"PATH": f"{bin_dir}:{os.environ['PATH']}", "TOKEN": TOKEN,
                          "FAKE_WORKER_OUT": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    argv = (tmp_path / "cmdline").read_text().splitlines()
    assert not any(TOKEN in a for a in argv)
    assert "--token" not in argv
    assert argv[argv.index("--token-file") + 1] == str(token_file)
    assert token_file.read_text() == TOKEN
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_a_worker_without_its_token_file_is_not_started(tmp_path):
    out = bash(f'start_worker w http://127.0.0.1:9 "{tmp_path}/none" "{tmp_path}" "{tmp_path}"',
               tmp_path, {"PATH": "/nonexistent:/usr/bin:/bin"})
    assert out.returncode == 2
    assert out.stderr.strip() == f"lava-farm: {tmp_path}/none: no token for w"


class _Server(BaseHTTPRequestHandler):
    """lava-server's worker API, as far as a ping: records the token."""
    seen: list[tuple[str, str, str]] = []
    pinged = threading.Event()

    def _answer(self) -> None:
        self.seen.append((self.command, self.path,
                          self.headers.get("LAVA-Token") or self.headers.get("Authorization", "")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")
        if "/scheduler/internal/v1/workers/" in self.path:
            self.pinged.set()

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


def test_the_real_lava_worker_sends_the_token_of_its_file(tmp_path):
    if not shutil.which("lava-worker"):
        pytest.skip("lava-worker not installed (make lava-run installs lava-dispatcher)")
    _Server.seen, _Server.pinged = [], threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    token_file = secrets_dir(tmp_path) / "w.token"
    (tmp_path / "log").mkdir()
    pid = 0
    try:
        out = bash(f'secret_file "{token_file}" "$TOKEN"; '
                   f'start_worker lab-test-worker "{url}" "{token_file}" "{tmp_path}/w" '
                   f'"{tmp_path}/log"; echo $!', tmp_path, {"TOKEN": TOKEN})
        assert out.returncode == 0, out.stderr
        pid = int(out.stdout)
        assert _Server.pinged.wait(120), (tmp_path / "log" / "lab-test-worker.log").read_text()
        # read once it has pinged: its own command line, not the shell's before exec
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert TOKEN.encode() not in b" ".join(cmdline)
        assert b"--token-file" in cmdline
        # its first request is the ping with the file's token: no auto-registration
        method, path, token = _Server.seen[0]
        assert (method, token) == ("GET", TOKEN)
        assert path.startswith("/scheduler/internal/v1/workers/lab-test-worker/")
    finally:
        if pid:
            stop(pid)
        server.shutdown()
        server.server_close()


def test_fetch_sends_the_token_of_its_file(tmp_path):
    _Server.seen, _Server.pinged = [], threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token_file = secrets_dir(tmp_path) / "admin.token"
    token_file.write_text(TOKEN + "\n")
    (tmp_path / "ids.txt").write_text("7\n")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "usercopy_lab", "lava", "fetch", "--server",
             f"http://127.0.0.1:{server.server_address[1]}", "--token-file", str(token_file),
             "--jobs", str(tmp_path / "ids.txt"), "--timeout", "0"],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "PYTHONPATH": str(WORKER_SH.parents[2] / "harness")})
    finally:
        server.shutdown()
        server.server_close()
    # the stand-in's {} is no job of ours: exit 2, said in one line (after
    # the progress line); the token went with the request
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.splitlines()[-1] == "lava: LAVA job 7 is not one of ours (metadata {})"
    assert _Server.seen[0] == ("GET", "/api/v0.2/jobs/7/", f"Token {TOKEN}")


def stop(pid: int) -> None:
    """SIGTERM to the worker (not this process's child) and what it
    started, SIGKILL to what still runs 60 s later; waited for."""
    end_tree(pid, timeout=60)
