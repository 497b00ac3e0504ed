"""What the benchmarks share: a scratch directory on a real disk (never a RAM disk), and the
statistics of a list of timed samples.

The benchmarks are scripts (``python bench/bench_cycle.py``), so this module is imported from
the script's own folder (``import benchkit``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parent.parent
"""The repository root: by default the benchmarks write under it, so on its filesystem."""

RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})
"""Filesystems held in memory: an fsync there returns at once, so a durable commit costs
nothing and a SQLite timing means nothing."""


@attrs.frozen
class Filesystem:
    """The mount a path lives on (from ``/proc/self/mountinfo``)."""

    fstype: str
    device: str
    mount_point: str

    def describe(self) -> str:
        return f"{self.fstype} on {self.device} (mounted at {self.mount_point})"


def _unescape(field: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def filesystem_of(path: str | os.PathLike[str]) -> Filesystem:
    """The filesystem ``path`` is on: the mount with the longest mount point above it."""
    where = os.path.realpath(path)
    best = Filesystem("unknown", "unknown", "")
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:  # not Linux: nothing to refuse on, and nothing to say
        return best
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        mount = _unescape(fields[4])
        inside = where == mount or where.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best.mount_point):
            best = Filesystem(tail[0], tail[1], mount)
    return best


@contextmanager
def disk_scratch(directory: str | None = None) -> Iterator[tuple[str, Filesystem]]:
    """A fresh temporary directory under ``directory`` (default: the repository root), removed
    afterwards, and the filesystem it is on.  Refuses, with ``SystemExit``, a RAM disk."""
    base = Path(directory) if directory else REPO
    if not base.is_dir():
        raise SystemExit(f"--dir {base}: not a directory")
    fs = filesystem_of(base)
    if fs.fstype in RAM_FILESYSTEMS:
        raise SystemExit(
            f"refusing {base}: it is on {fs.describe()}, a RAM disk, where a durable commit "
            "never waits for the disk. Pass --dir DIRECTORY on a real disk.")
    with tempfile.TemporaryDirectory(prefix=".pp-bench-", dir=base) as tmp:
        yield tmp, fs


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


@attrs.frozen
class Summary:
    """The median and 95th percentile of some samples, in the samples' unit."""

    n: int
    median: float
    p95: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Summary:
        return cls(len(samples), statistics.median(samples), percentile(samples, 0.95))


def spin(seconds: float) -> None:
    """Busy-wait ``seconds``: the CPU never idles (only the disk may), and the loop touches no
    benchmarked code or data."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def int_list(parser: argparse.ArgumentParser, flag: str, text: str, least: int) -> list[int]:
    """``flag``'s value ``text``: different whole numbers of at least ``least``, separated by
    commas (``1,2,4,8``); anything else is the parser's usage error, naming the flag."""
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        parser.error(f"{flag} takes numbers separated by commas, not {text!r}")
    if any(v < least for v in values) or len(set(values)) != len(values):
        parser.error(f"{flag} takes different numbers of at least {least}, not {text!r}")
    return values


def add_round_options(parser: argparse.ArgumentParser, rounds: int) -> None:
    """``--rounds``, ``--warmup`` and ``--dir``, as the interleaved benchmarks take them (with
    :func:`disk_scratch` for ``--dir``)."""
    parser.add_argument("--rounds", type=int, default=rounds,
                        help=f"timed rounds (default {rounds})")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first (default 5)")
    parser.add_argument("--dir", help="where the SQLite files go, on a real disk (default: a "
                        "temporary folder in the repository)")
