"""Benchmark: how much of each cycle is the cost of cold caches.  It prints figures; it asserts
nothing about time.

On a shared machine (a VM whose neighbours share the CPU's second- and third-level caches), the
code and data a cycle has not touched for a few milliseconds are evicted.  In
``bench_cycle.py`` every variant runs between others, so each cycle runs with cold caches, and
a cycle that touches many distinct cache lines (Python functions, objects, library code) pays
for it far more than its instruction count says.  This benchmark shows how much, per variant:

* **warm**: the variant's cycle timed right after another cycle of the same variant;
* **cold**: the variant's cycle timed right after ``--spin-ms`` of a busy loop that touches
  none of its code or data (a spin, not a sleep, so the CPU never idles).

The spin idles the disk as well as the caches: on some disks (a VM's) the first flush after an
idle stretch is slower than one right after another, so part of a cold cycle's penalty is its
commits' (``bench_fsync_gap.py`` measures that alone, by the length of the gap).

Each round runs every (variant, mode) pair once, in an order shuffled anew each round, on the
real disk (``bench_cycle.py``'s files and variants).  The penalty is cold minus warm; the
floor's penalty is the part no implementation can avoid (its sign, verify and commits run cold
too).

Usage::

    python bench/bench_cold.py                     # floor, service, embedding; 100 rounds
    python bench/bench_cold.py --only service --spin-ms 1 --rounds 300
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rich.console import Console
from rich.table import Table

from bench_cycle import VARIANTS, Variant, make_variants
from benchkit import Summary, add_round_options, disk_scratch, load_average, spin

DEFAULT = ("floor", "service", "embedding")


def run(variants: Sequence[Variant], rounds: int, warmup: int, spin_s: float, seed: int = 0
        ) -> dict[tuple[str, str], list[float]]:
    """``{(sample name, "warm" | "cold"): seconds}`` over ``rounds`` shuffled rounds."""
    rng = random.Random(seed)
    tasks = [(variant, mode) for variant in variants for mode in ("warm", "cold")]
    samples: dict[tuple[str, str], list[float]] = {}
    for r in range(warmup + rounds):
        rng.shuffle(tasks)
        for variant, mode in tasks:
            if mode == "warm":
                variant.round()
            else:
                spin(spin_s)
            got = variant.round()
            if r >= warmup:
                for name, seconds in got:
                    samples.setdefault((name, mode), []).append(seconds)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_round_options(parser, rounds=100)
    parser.add_argument("--spin-ms", type=float, default=5.0,
                        help="busy loop before each cold sample, in ms (default 5)")
    parser.add_argument("--only", choices=VARIANTS, action="append",
                        help=f"run only this variant (repeatable; default {', '.join(DEFAULT)})")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0 or not 0 < args.spin_ms <= 1000:
        parser.error("--rounds must be at least 1, --warmup at least 0, --spin-ms in (0, 1000]")
    console = Console()
    start = load_average()
    with disk_scratch(args.dir) as (directory, fs):
        variants, missing = make_variants(args.only or DEFAULT, directory, batch=1)
        try:
            samples = run(variants, args.rounds, args.warmup, args.spin_ms / 1e3)
        finally:
            for variant in variants:
                variant.close()
    console.print(f"disk: {fs.describe()}; {args.rounds} rounds, spin {args.spin_ms:g} ms; "
                  f"load average {start[0]:.2f} at start, {load_average()[0]:.2f} at end")
    for name, why in missing.items():
        console.print(f"not run: {name}: {why}")
    table = Table(title="median ms: right after itself (warm) and after a spin (cold)")
    for column in ("what", "warm", "cold", "cold - warm", "cold / warm"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for name in dict.fromkeys(n for n, _ in samples):
        if (name, "warm") not in samples or (name, "cold") not in samples:
            # a sample a variant takes in some of its rounds only (the floor's three
            # sequences, one per round), not taken in either mode yet
            table.add_row(name, *("-" if (name, mode) not in samples else
                                  f"{Summary.of(samples[(name, mode)]).median * 1e3:.3f}"
                                  for mode in ("warm", "cold")), "-", "-")
            continue
        warm = Summary.of(samples[(name, "warm")]).median * 1e3
        cold = Summary.of(samples[(name, "cold")]).median * 1e3
        table.add_row(name, f"{warm:.3f}", f"{cold:.3f}", f"{cold - warm:+.3f}",
                      f"{cold / warm:.2f}")
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
