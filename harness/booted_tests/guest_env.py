"""Where the booted checks find the lab's kernels and initramfs.

`make test` sets USERCOPY_LAB_BUILD (the build folder) and
USERCOPY_LAB_INITRAMFS; without them every booted check is skipped.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("USERCOPY_LAB_BUILD", "/nonexistent"))
INITRAMFS = Path(os.environ.get("USERCOPY_LAB_INITRAMFS", "/nonexistent"))
KERNEL = BUILD / "kernel-seeds" / "arch/x86/boot/bzImage"   # the default suite's kernel

needs_guests = pytest.mark.skipif(
    not (KERNEL.is_file() and INITRAMFS.is_file()),
    reason="needs USERCOPY_LAB_BUILD/USERCOPY_LAB_INITRAMFS (run via make test)")
