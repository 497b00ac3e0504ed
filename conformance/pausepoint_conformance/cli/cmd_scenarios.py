"""Generate scenario vectors: JSON test cases whose expected outcomes come from the reference
model (pausepoint.system.model), for replaying against any implementation.

One file per family of scripted runs (basic, two-questions, multi, crash-after-apply,
crash-before-apply, lineage, unrecorded).  Every operation sequence up to --depth operations is
generated (exhaustive); --random adds that many longer cases drawn by Hypothesis, the same ones
for the same --seed.  Each file validates against spec/schemas/vector-file.json; each case has
an id that is a hash of its content, a unique description, its clauses and the clause groups an
implementation must claim to run it.

Examples:
  pausepoint scenarios --out vectors
  pausepoint scenarios --out vectors --depth 3 --random 1000 --seed 7
  pausepoint conform --vectors vectors --adapter cmd:"node my-adapter.js"
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pausepoint_conformance.cli.common import UsageError, output_dir
from pausepoint_conformance.cli.common import console as out_console

NAME = "scenarios"
HELP = "write scenario vectors (JSON, expected outcomes from the reference model)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="directory to write the vector files into (created if missing)")
    parser.add_argument("--depth", type=int, default=2, metavar="N",
                        help="exhaustive: every sequence of up to N operations after the "
                             "starts (default 2)")
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="also N random longer cases, drawn by Hypothesis (default 0)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the random cases (default 0)")
    parser.add_argument("--family", action="append", default=[], metavar="NAME",
                        help="only this family (repeatable)")


def run(args: argparse.Namespace) -> int:
    from pausepoint_conformance.vectors.generator import FAMILIES, generate, write_all

    console = out_console()
    if args.depth < 0 or args.random < 0:
        raise UsageError("--depth and --random must not be negative")
    output_dir(args.out, "--out")
    families = [f for f in FAMILIES if not args.family or f.name in args.family]
    unknown = set(args.family) - {f.name for f in FAMILIES}
    if unknown:
        raise UsageError(f"--family: unknown family {', '.join(sorted(unknown))}; the families "
                         f"are {', '.join(f.name for f in FAMILIES)}")
    with console.status(f"generating vectors (depth {args.depth}, {args.random} random)"):
        files = generate(depth=args.depth, random=args.random, seed=args.seed,
                         families=families)
    paths = write_all(args.out, files)
    total = sum(len(v.cases) for v in files.values())
    for p in paths:
        console.print(f"  {p}  ({len(files[p.stem].cases)} cases)", highlight=False)
    console.print(f"wrote {total} cases in {len(paths)} files to {args.out}", highlight=False)
    return 0
