"""Benchmark: the SQLite store's page size, by the size of what a cycle asks.  It prints
figures; it asserts nothing about time.

``SqliteStore`` makes a new file with :data:`~pausepoint.stores.sqlite.PAGE_SIZE` pages.  A
smaller page makes each write-ahead-log frame smaller; a larger one makes a row that does not
fit a page -- a bigger payload, a run whose continuation data holds a bigger input -- take
fewer overflow pages, and so fewer frames, each written and synced at the commit.  Which wins
depends on the payload, so this benchmark times both store-backed cycles of
``bench_cycle.py`` -- the embedding-API cycle and the service cycle -- on a store file of each
page size (``--page-sizes``), for each payload (``--payload-bytes``: characters added to issue
15's ``{"amount": 12}``, as ``bench_cycle.py --payload-bytes`` does), with LangGraph's cycle
asking the same payload run between them: every variant interleaved in one process, in an
order shuffled anew each round, on the real disk, so each cycle runs with caches as cold as in
``bench_cycle.py``.

It prints each median, its ratio to the median at the default page size with the same payload,
and the embedding cycle's ratio to LangGraph's (issue 15's target is 0.20 for the 13-byte
payload).

Usage::

    python bench/bench_page_size.py                       # 1024,2048,4096 x 0,2000,8000,32000
    python bench/bench_page_size.py --page-sizes 1024,2048 --payload-bytes 0 --rounds 500
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rich.console import Console
from rich.table import Table

from bench_cycle import (
    EmbeddingCycle,
    Samples,
    ServiceCycle,
    Variant,
    _langgraph,
    json_bytes,
    note_error,
    page_sizes,
    payload_of,
    run_rounds,
)
from benchkit import Summary, add_round_options, disk_scratch, int_list, load_average
from pausepoint.stores.sqlite import PAGE_SIZE, SqliteStore

CYCLES = ("embedding", "service")


class Labelled:
    """A variant whose samples are named ``label`` (one name per cycle, page size, payload)."""

    def __init__(self, variant: Variant, label: str) -> None:
        self.variant, self.label, self.name = variant, label, label

    def round(self) -> Samples:
        return [(self.label, seconds) for _name, seconds in self.variant.round()]

    def close(self) -> None:
        self.variant.close()


def label(cycle: str, page_size: int | None, note: int) -> str:
    """A sample's name: the cycle, the page size (None: LangGraph's file), the note."""
    return f"{cycle}/{page_size or '-'}/{note}"


def make(directory: str, sizes: Sequence[int], notes: Sequence[int]
         ) -> tuple[list[Variant], str | None]:
    """Every (cycle, page size, payload) variant, and LangGraph's per payload; why LangGraph
    cannot run, if it cannot (its cycles are then left out)."""
    made: list[Variant] = []
    missing = None
    for note in notes:
        payload = payload_of(note)
        for size in sizes:
            path = os.path.join(directory, f"{{}}-{size}-{note}.db")
            made.append(Labelled(EmbeddingCycle(path.format("embedding"), payload,
                                                page_size=size),
                                 label("embedding", size, note)))
            made.append(Labelled(ServiceCycle(SqliteStore(path.format("service"),
                                                          page_size=size), payload=payload),
                                 label("service", size, note)))
        peer_dir = os.path.join(directory, f"langgraph-{note}")
        os.mkdir(peer_dir)
        peer = _langgraph(peer_dir, payload)
        if isinstance(peer, str):
            missing = peer
        else:
            made.append(Labelled(peer, label("langgraph", None, note)))
    return made, missing


def report(samples: dict[str, list[float]], sizes: Sequence[int], notes: Sequence[int],
           pages: dict[str, int], missing: str | None) -> dict[str, Any]:
    medians = {name: Summary.of(values).median for name, values in samples.items()}
    base = PAGE_SIZE if PAGE_SIZE in sizes else sizes[0]
    rows = []
    for note in notes:
        peer = medians.get(label("langgraph", None, note))
        for cycle in CYCLES:
            for size in sizes:
                took = medians[label(cycle, size, note)]
                rows.append({
                    "cycle": cycle, "page_size": size, "note": note,
                    "payload_bytes": json_bytes(payload_of(note)), "median_ms": took * 1e3,
                    "vs_base": took / medians[label(cycle, base, note)],
                    "vs_langgraph": None if peer is None else took / peer})
    return {"base_page_size": base, "default_page_size": PAGE_SIZE, "rows": rows,
            "langgraph_ms": {str(note): medians[label("langgraph", None, note)] * 1e3
                             for note in notes if label("langgraph", None, note) in medians},
            "page_sizes": pages, "not_available": missing,
            "load_average_end": list(load_average())}


def print_report(out: dict[str, Any], rounds: int) -> None:
    console = Console(highlight=False)
    base = out["base_page_size"]
    table = Table(title=f"cycle medians by store page size ({rounds} rounds, interleaved); "
                  f"x: against {base}-byte pages, same payload")
    for name in ("cycle", "payload bytes", "page size", "median ms", f"x {base}",
                 "/ LangGraph"):
        table.add_column(name, justify="left" if name == "cycle" else "right")
    for row in out["rows"]:
        peer = row["vs_langgraph"]
        table.add_row(row["cycle"], str(row["payload_bytes"]), str(row["page_size"]),
                      f"{row['median_ms']:.3f}", f"{row['vs_base']:.3f}",
                      "-" if peer is None else f"{peer:.3f}")
    console.print(table)
    if out["langgraph_ms"]:
        console.print("LangGraph's cycle (ms) by payload bytes: " + ", ".join(
            f"{json_bytes(payload_of(int(note)))}: {ms:.3f}"
            for note, ms in out["langgraph_ms"].items()))
    if out["not_available"]:
        console.print(f"LangGraph: {out['not_available']}")
    console.print(f"the stores' default page size: {out['default_page_size']} bytes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_round_options(parser, rounds=200)
    parser.add_argument("--page-sizes", default="1024,2048,4096",
                        help="the store files' page sizes, each a power of two from 512 to "
                        "65536 (default 1024,2048,4096)")
    parser.add_argument("--payload-bytes", default="0,2000,8000,32000",
                        help="characters added to every cycle's payload, one run of variants "
                        "for each (default 0,2000,8000,32000; 0 is issue 15's payload)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1, --warmup at least 0")
    sizes = int_list(parser, "--page-sizes", args.page_sizes, 512)
    notes = int_list(parser, "--payload-bytes", args.payload_bytes, 0)
    for note in notes:
        too_long = note_error(note)
        if too_long is not None:
            parser.error(f"--payload-bytes: {too_long}")
    bad = [s for s in sizes if s > 65536 or s & (s - 1)]
    if bad:
        parser.error(f"--page-sizes: {bad[0]} is not a power of two from 512 to 65536")
    with disk_scratch(args.dir) as (directory, _fs):
        variants, missing = make(directory, sizes, notes)
        try:
            samples = run_rounds(variants, args.rounds, args.warmup)
        finally:
            for variant in variants:
                variant.close()
        out = report(samples, sizes, notes, page_sizes(directory), missing)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_report(out, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
