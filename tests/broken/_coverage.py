"""Coverage by killed clauses: a clause counts as covered only when some deliberately broken
implementation of it (``tests/broken/``) MUST fail it -- which ``test_conformance_broken``
proves over stdio, with and without vectors -- not because a check or a docstring cites it.

Run ``python tests/broken/_coverage.py`` for the report (Markdown): every MUST clause of the
catalogue, the broken implementations that kill it, and those no implementation kills yet.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _registry import registry

from pausepoint.core.clauses import CLAUSES, Level

NOT_KILLED_YET: frozenset[str] = frozenset()
"""MUST clauses no broken implementation here is declared to kill: none.  A new MUST clause
comes with a broken implementation that must fail it (``tests/test_coverage.py`` holds this
empty and ``spec/known-limitations.md`` to the same list)."""


def killers() -> dict[str, list[str]]:
    """Every clause of the catalogue -> the broken implementations that must fail it."""
    out: dict[str, list[str]] = {c.id: [] for c in CLAUSES}
    for d in registry().values():
        for c in d.must:
            out[c].append(d.name)
    return out


def not_killed(level: Level = Level.MUST) -> set[str]:
    k = killers()
    return {c.id for c in CLAUSES if c.level == level and not k[c.id]}


def report() -> str:
    k = killers()
    must = [c for c in CLAUSES if c.level == Level.MUST]
    dead = [c for c in must if k[c.id]]
    head = (f"{len(dead)} of {len(must)} MUST clauses killed by a broken implementation "
            f"({len(registry())} implementations).")
    lines = [head, "",
             "| clause | group | killed by |", "|---|---|---|"]
    lines += [f"| `{c.id}` | {c.group.value} | "
              f"{', '.join(f'`{n}`' for n in sorted(k[c.id])) or '**not killed**'} |"
              for c in must]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(report(), end="")
