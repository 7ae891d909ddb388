"""The initramfs a guest boots: the shared userland, plus a kernel's modules.

The userland archive (build/initramfs.cpio, or build/initramfs-ARCH.cpio)
does not depend on a kernel.  A suite whose kernel builds LKDTM as a module
(suites.toml `modules`) boots that archive followed by the kernel's own
modules archive (build/kernel-NAME/modules*.cpio, `make modules-cpio`):
the kernel unpacks concatenated newc archives one after the other
(init/initramfs.c unpack_to_rootfs() reads on past each TRAILER!!!), and
QEMU's -initrd takes one file, so the two are written one after the other
into one file.  Its name is a hash of both contents, so two runs (or two
suites) that need the same pair share it, and a rebuilt kernel gets a new
one.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from ..inputs import InputError


def with_modules(base: Path, modules: Path, cache_dir: Path, kernel: str,
                 make_modules: str) -> Path:
    """cache_dir/<kernel>-<hash>.cpio: base followed by modules.  InputError
    naming the missing archive and the make command that builds it
    (make_modules for the modules archive)."""
    for path, target in ((base, "make initramfs"), (modules, make_modules)):
        if not path.is_file():
            raise InputError(f"{path} missing ({target})")
    parts = [base.read_bytes(), modules.read_bytes()]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    out = cache_dir / f"{kernel}-{digest.hexdigest()[:12]}.cpio"
    if out.is_file():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{kernel}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for part in parts:
                f.write(part)
        os.replace(tmp, out)       # atomic: a run at the same time sees all or nothing
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
