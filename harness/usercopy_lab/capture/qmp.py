"""A minimal QMP client: one command at a time, events skipped.

Used to save a guest at its ready point (snapshot.py) and to pause and
reload a guest that a worker slot keeps between triggers (restore.py).
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


SOCKET_NAME = "qmp.sock"
_SUN_PATH_MAX = 107       # sockaddr_un.sun_path holds 108 bytes with its NUL


def socket_dir() -> Path:
    """A new private folder for one QEMU's QMP socket (SOCKET_NAME in it;
    the caller removes it): in TMPDIR, unless a socket there would be
    longer than a unix socket path may be (a deep TMPDIR, as pytest's), then
    in /tmp.  Never beside the results, whose paths have no bound."""
    folder = Path(tempfile.mkdtemp(prefix="usercopy-lab-qmp-"))
    if len(os.fsencode(folder / SOCKET_NAME)) <= _SUN_PATH_MAX:
        return folder
    folder.rmdir()
    return Path(tempfile.mkdtemp(prefix="usercopy-lab-qmp-", dir="/tmp"))


class QmpError(Exception):
    """One line: what QMP (or the way to it) said."""


class QmpClient:
    """Context manager: connects (retrying while QEMU creates the socket),
    negotiates capabilities, closes the socket on exit.  alive, if given,
    stops the retries early once QEMU is gone."""

    def __init__(self, path: Path, timeout: float,
                 alive: Callable[[], bool] | None = None) -> None:
        self._path = path
        self._timeout = timeout
        self._alive = alive
        self._sock: socket.socket | None = None
        self._buf = b""

    def __enter__(self) -> QmpClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        deadline = time.monotonic() + self._timeout
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self._timeout)
            try:
                sock.connect(str(self._path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                if self._alive is not None and not self._alive():
                    raise QmpError(f"QEMU exited before its QMP socket {self._path} "
                                   "answered") from None
                if time.monotonic() > deadline:
                    raise QmpError(f"no QMP socket at {self._path}") from None
                time.sleep(0.02)
        self._sock = sock
        if self._message() is None:           # greeting
            raise QmpError("QMP closed before its greeting")
        self.command("qmp_capabilities")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def hmp(self, line: str) -> str:
        """A human monitor command; its output ("" when a command such as
        savevm or loadvm succeeded)."""
        return str(self.command("human-monitor-command", **{"command-line": line}))

    def command(self, name: str, **arguments: Any) -> Any:
        if self._sock is None:
            raise QmpError(f"QMP not connected for {name}")
        msg: dict[str, Any] = {"execute": name}
        if arguments:
            msg["arguments"] = arguments
        try:
            self._sock.sendall(json.dumps(msg).encode() + b"\n")
        except OSError as exc:
            raise QmpError(f"QMP {name}: {exc}") from exc
        while True:
            reply = self._message()
            if reply is None:
                if name == "quit":
                    return None
                raise QmpError(f"QMP closed during {name}")
            if "error" in reply:
                raise QmpError(f"QMP {name}: {reply['error'].get('desc', reply['error'])}")
            if "return" in reply:
                return reply["return"]

    def _message(self) -> dict[str, Any] | None:
        assert self._sock is not None
        while b"\n" not in self._buf:
            try:
                chunk = self._sock.recv(65536)
            except OSError as exc:
                raise QmpError(f"QMP: {exc}") from exc
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError as exc:
            raise QmpError(f"QMP sent no JSON: {line[:80]!r}") from exc
