"""A peer's conformance matrix: every clause with its verdict and the one-line reason, as the
markdown table ``docs/peers.md`` publishes between :data:`BEGIN` and :data:`END`.

The matrix is what these two commands report (the built-in checks, and the scenario vectors of
the default generation)::

    pausepoint scenarios --out vectors
    pausepoint conform --vectors vectors \\
        --adapter pausepoint_conformance.peers.langgraph_peer:make_sqlite

``python -m pausepoint_conformance.peers.matrix [docs/peers.md]`` rewrites the table in place;
a test keeps the committed table equal to a fresh one.  Interrupt ids, which LangGraph derives
from fresh checkpoint ids, are written as ``<id>`` so that the table does not change from one
run to the next.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..port import Adapter
from ..report import LABEL
from ..runner import Plan, SuiteResult, run_suite
from ..vector_generator import generate
from ..vectors import LoadedCase

BEGIN: Final[str] = "<!-- BEGIN GENERATED -->"
END: Final[str] = "<!-- END GENERATED -->"
ADAPTER: Final[str] = "pausepoint_conformance.peers.langgraph_peer:make_sqlite"
DOC: Final[Path] = Path("docs/peers.md")

_ID: Final = re.compile(r"\b[0-9a-f]{32}\b")


def default_vectors() -> tuple[LoadedCase, ...]:
    """The cases ``pausepoint scenarios`` writes by default, in the order ``pausepoint conform
    --vectors`` reads them back (file by file, by name)."""
    files = generate()
    return tuple(LoadedCase(c, vf.ttl_ms, f"{name}.json")
                 for name, vf in sorted(files.items()) for c in vf.cases)


def measure(factory: Callable[[], Adapter], name: str = ADAPTER) -> SuiteResult:
    """Every check and every default vector against the adapter ``factory`` makes."""
    adapter = factory()
    try:
        return run_suite(adapter, adapter_name=name, plan=Plan(vectors=default_vectors()))
    finally:
        adapter.close()


def _cell(text: str) -> str:
    return _ID.sub("<id>", " ".join(text.split())).replace("|", "\\|")


def table(result: SuiteResult) -> str:
    """The matrix as markdown: what was measured, the verdict counts, a row per clause."""
    impl = result.header.get("implementation") or {}
    counts: dict[str, int] = {}
    for v in result.clauses:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    tally = ", ".join(f"{counts[k]} {label}" for k, label in LABEL.items() if k in counts)
    lines = [f"Measured: {impl.get('name', result.header['adapter'])} {impl.get('version', '')}"
             f", claiming {', '.join(result.header.get('claimed', []))}.  "
             f"{len(result.clauses)} clauses: {tally}.", "",
             "| clause | group | verdict | why |", "|---|---|---|---|"]
    lines += [f"| `{v.id}` | {v.group} | {LABEL.get(v.verdict, v.verdict)} | {_cell(v.why)} |"
              for v in result.clauses]
    return "\n".join(lines)


def splice(doc: str, generated: str) -> str:
    """``doc`` with the text between the markers replaced by ``generated``."""
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the document has no {BEGIN} ... {END} block")
    return f"{head}{BEGIN}\n{generated}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    from .langgraph_peer import make_sqlite

    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DOC
    path.write_text(splice(path.read_text(encoding="utf-8"), table(measure(make_sqlite))),
                    encoding="utf-8")
    print(f"wrote the matrix of {ADAPTER} to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
