"""Booted tests need a kernel and an initramfs; `make booted-test` names them.

Run by hand without USERCOPY_LAB_BUILD, they skip.  When the variables are
set but name files that do not exist (a wrong BUILD path), that is an error,
not a skip: a run where every booted test skipped must not look green.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if "USERCOPY_LAB_BUILD" not in os.environ:
        return
    build = Path(os.environ["USERCOPY_LAB_BUILD"])
    wanted = [build / "kernel-seeds/arch/x86/boot/bzImage",
              Path(os.environ.get("USERCOPY_LAB_INITRAMFS", "/nonexistent"))]
    missing = [str(p) for p in wanted if not p.is_file()]
    if missing:
        raise pytest.UsageError(f"USERCOPY_LAB_BUILD is set but {', '.join(missing)} "
                                "missing: the booted tests would all skip")
