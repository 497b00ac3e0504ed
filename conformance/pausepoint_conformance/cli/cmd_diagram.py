"""Draw a lifecycle from its transition table: Mermaid, Graphviz DOT, or SVG.

The pause lifecycle is drawn from pausepoint.core.lifecycle's table (the same Mermaid that
spec/lifecycle.md embeds, from pausepoint.system.diagram.mermaid); DOT is the same edges for
Graphviz, and SVG is DOT laid out by Graphviz's `dot` program (apt-get install graphviz).
Every accepting transition is one edge; edges between the same two states share one arrow
whose label lists the events.  Terminal states are drawn with a double border.

Examples:
  pausepoint diagram                          # Mermaid, for Markdown pages
  pausepoint diagram --format dot | dot -Tpng > lifecycle.png
  pausepoint diagram --format svg --out lifecycle.svg
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs

from pausepoint.system import diagram
from pausepoint_conformance.cli.common import UsageError, writable_file

NAME = "diagram"
HELP = "draw the pause lifecycle from its table: Mermaid, DOT, or SVG (with Graphviz)"


@attrs.frozen
class Machine:
    """A lifecycle that can be drawn: its title and its Mermaid ``stateDiagram-v2`` text
    (fenced), generated from its table."""

    title: str
    mermaid: Callable[[], str]


MACHINES: Final[dict[str, Machine]] = {
    "pause": Machine("the lifecycle of one pause point (pausepoint.core.lifecycle.TABLE)",
                     diagram.mermaid),
    "run": Machine("the lifecycle of one run (pausepoint.core.runs.TABLE)", diagram.run_mermaid),
}
"""Every lifecycle ``pausepoint diagram`` draws, by ``--machine`` name.  The extension point
for another table (the run lifecycle): add a :class:`Machine` whose ``mermaid`` renders it."""

_EDGE: Final = re.compile(r"^\s*(?P<src>\S+) --> (?P<dst>\S+)(?: : (?P<label>.*))?$")


def dot(machine: Machine, name: str) -> str:
    """The machine as a Graphviz digraph, edge for edge what its Mermaid draws (``[*]`` is the
    start point and the end point)."""
    lines = [f'digraph "{name}" {{', "    rankdir=LR;",
             '    node [shape=box, style=rounded, fontname="Helvetica"];',
             '    edge [fontname="Helvetica", fontsize=10];',
             '    start [shape=point, width=0.15, label=""];']
    edges = [m for m in map(_EDGE.match, machine.mermaid().splitlines()) if m is not None]
    # A terminal state (an arrow to [*]) gets a double border instead of an arrow to an end.
    lines += [f'    "{m["src"]}" [peripheries=2];' for m in edges if m["dst"] == "[*]"]
    for m in edges:
        src, dst = m["src"], m["dst"]
        if dst == "[*]":
            continue
        src_id = "start" if src == "[*]" else f'"{src}"'
        label = f' [label="{m["label"]}"]' if m["label"] else ""
        lines.append(f'    {src_id} -> "{dst}"{label};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def svg(dot_text: str) -> str:
    """``dot_text`` laid out by Graphviz; a usage error when ``dot`` is not installed."""
    program = shutil.which("dot")
    if program is None:
        raise UsageError("--format svg needs Graphviz's dot program, which is not installed; "
                         "install it (apt-get install graphviz) or use --format dot / mermaid")
    done = subprocess.run([program, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                          check=False, timeout=60)
    if done.returncode != 0:
        raise UsageError(f"dot failed: {done.stderr.strip()[:300]}")
    return done.stdout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machine", choices=sorted(MACHINES), default="pause",
                        help="which lifecycle (default: pause)")
    parser.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid",
                        help="mermaid (default; fenced, for Markdown), dot (Graphviz), or svg "
                             "(needs Graphviz's dot: apt-get install graphviz)")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="write here instead of standard output")


def render(machine_name: str, fmt: str) -> str:
    machine = MACHINES[machine_name]
    if fmt == "mermaid":
        return machine.mermaid()
    text = dot(machine, machine_name)
    return svg(text) if fmt == "svg" else text


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        writable_file(args.out, "--out")
    text = render(args.machine, args.format)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.format} of {MACHINES[args.machine].title} to {args.out}",
              file=sys.stderr)
    return 0
