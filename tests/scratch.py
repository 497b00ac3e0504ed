"""Where tests put the reference's scratch SQLite files: a RAM-backed directory when the machine
has one (the same commits, without waiting on the disk's fsync)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def fast_tmpdir() -> str | None:
    """``/dev/shm`` when it is a writable directory, else None (the system default)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def fast_env() -> dict[str, str]:
    """This process's environment with ``TMPDIR`` pointing at :func:`fast_tmpdir`."""
    env = dict(os.environ)
    where = fast_tmpdir()
    if where:
        env["TMPDIR"] = where
    return env


@contextlib.contextmanager
def fast_tempfiles() -> Iterator[None]:
    """Within it, :mod:`tempfile` makes its files and directories under :func:`fast_tmpdir`
    (for adapters that make their own scratch directory, such as the peers)."""
    saved, tempfile.tempdir = tempfile.tempdir, fast_tmpdir()
    try:
        yield
    finally:
        tempfile.tempdir = saved
