"""The peers' conformance matrices: for each peer of :data:`~.PEERS`, every clause with its
verdict and the one-line reason, as the markdown table its page publishes between
:data:`BEGIN` and :data:`END`; and on ``docs/peers.md`` one table of every clause against every
peer.

A peer's matrix is what these two commands report (the built-in checks, and the scenario
vectors of the default generation)::

    pausepoint scenarios --out vectors
    pausepoint conform --vectors vectors --adapter <the peer's factory>

``python -m pausepoint_conformance.peers.matrix`` rewrites every generated block in place (run
it from the repository root); a test keeps the committed blocks equal to fresh ones.  Opaque
ids a framework makes up (32 hex digits, UUIDs) are written as ``<id>`` so that the tables do
not change from one run to the next.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Final

from pausepoint.core.clauses import CLAUSES
from pausepoint_conformance.adapters.loader import load_factory
from pausepoint_conformance.peers import GUARDED, PEERS, Peer
from pausepoint_conformance.suite.report import LABEL
from pausepoint_conformance.suite.runner import Plan, SuiteResult, Verdict, run_suite
from pausepoint_conformance.vectors.generator import generate
from pausepoint_conformance.vectors.replay import LoadedCase

BEGIN: Final[str] = "<!-- BEGIN GENERATED -->"
END: Final[str] = "<!-- END GENERATED -->"
OVERVIEW: Final[str] = "docs/peers.md"

_ID: Final = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                        r"[0-9a-f]{12}\b")


def default_vectors() -> tuple[LoadedCase, ...]:
    """The cases ``pausepoint scenarios`` writes by default, in the order ``pausepoint conform
    --vectors`` reads them back (file by file, by name)."""
    files = generate()
    return tuple(LoadedCase(c, vf.ttl_ms, f"{name}.json")
                 for name, vf in sorted(files.items()) for c in vf.cases)


@functools.cache
def measure_factory(factory: str) -> SuiteResult:
    """Every check and every default vector against the adapter ``factory`` makes (measured
    once per process)."""
    adapter = load_factory(factory)()
    try:
        return run_suite(adapter, adapter_name=factory, plan=Plan(vectors=default_vectors()))
    finally:
        adapter.close()


def measure(peer: Peer) -> SuiteResult:
    """The published variant of the peer, measured."""
    return measure_factory(peer.factory)


FAILING: Final[frozenset[str]] = frozenset({Verdict.FAILED, Verdict.ERRORED})
"""The verdicts a row must back with a reproduction."""

NO_REPRODUCTION: Final[str] = "no plain-framework reproduction on the page yet"


def reproduction(peer: Peer, clause_id: str) -> str:
    """The link to the page's reproduction of a failing clause, or :data:`NO_REPRODUCTION`."""
    found = [r for r in peer.reproductions if clause_id in r.clauses]
    if not found:
        return NO_REPRODUCTION
    page = "" if found[0].page is None else Path(found[0].page).name  # a sibling page
    return f"[reproduction]({page}#{found[0].anchor})"


def _cell(text: str) -> str:
    return _ID.sub("<id>", " ".join(text.split())).replace("|", "\\|")


def tally(result: SuiteResult) -> str:
    counts: dict[str, int] = {}
    for v in result.clauses:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    return ", ".join(f"{counts[k]} {label}" for k, label in LABEL.items() if k in counts)


def table(result: SuiteResult, peer: Peer | None = None) -> str:
    """One peer's matrix as markdown: what was measured, the verdict counts, a row per
    clause; a failing row of ``peer`` names the page's reproduction of its failure."""
    impl = result.header.get("implementation") or {}
    lines = [(f"Measured: {impl.get('name', result.header['adapter'])} "
              f"{impl.get('version', '')}, claiming "
              f"{', '.join(result.header.get('claimed', []))}.  "
              f"{len(result.clauses)} clauses: {tally(result)}."), "",
             "| clause | group | verdict | why |", "|---|---|---|---|"]
    for v in result.clauses:
        why = _cell(v.why)
        if peer is not None and v.verdict in FAILING:
            why = f"{why} -- {reproduction(peer, v.id)}"
        lines.append(f"| `{v.id}` | {v.group} | {LABEL.get(v.verdict, v.verdict)} | {why} |")
    return "\n".join(lines)


def differences(published: SuiteResult, other: SuiteResult, what: str) -> str:
    """The clauses whose verdicts ``other`` (the documented alternative ``what``) changes."""
    theirs = {v.id: v for v in other.clauses}
    rows = [f"| `{v.id}` | {LABEL.get(v.verdict, v.verdict)} | "
            f"{LABEL.get(theirs[v.id].verdict, theirs[v.id].verdict)} | "
            f"{_cell(theirs[v.id].why)} |"
            for v in published.clauses if theirs[v.id].verdict != v.verdict]
    return "\n".join([f"With {what}: {tally(other)}.", "",
                       "| clause | published | with it | why, with it |", "|---|---|---|---|",
                       *rows])


def overview(results: dict[Peer, SuiteResult]) -> str:
    """Every clause against every peer: the verdict labels, and each peer's counts."""
    peers = list(results)
    here = Path(OVERVIEW).parent  # links relative to the overview page
    head = "| clause | group | " + " | ".join(
        f"[{p.name}]({Path(p.doc).relative_to(here).as_posix()})" for p in peers) + " |"
    lines = [f"- **{p.name}**: {tally(r)}." for p, r in results.items()]
    lines += ["", head, "|---|---|" + "---|" * len(peers)]
    verdicts = {p: {v.id: v.verdict for v in r.clauses} for p, r in results.items()}
    for c in CLAUSES:
        cells = " | ".join(LABEL.get(verdicts[p][c.id], verdicts[p][c.id]) for p in peers)
        lines.append(f"| `{c.id}` | {c.group.value} | {cells} |")
    return "\n".join(lines)


def splice(doc: str, generated: str) -> str:
    """``doc`` with the text between the markers replaced by ``generated``."""
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the document has no {BEGIN} ... {END} block")
    return f"{head}{BEGIN}\n{generated}\n{END}{tail}"


def pages(root: Path = Path(".")) -> dict[Path, str]:
    """Every page with its generated block brought up to date (written or not)."""
    results = {p: measure(p) for p in (*PEERS, *GUARDED)}
    out: dict[Path, str] = {}
    for peer, result in results.items():
        path = root / peer.doc
        text = table(result, peer)
        if peer.alternative is not None:
            what, factory = peer.alternative
            text += "\n\n" + differences(result, measure_factory(factory), what)
        out[path] = splice(path.read_text(encoding="utf-8"), text)
    path = root / OVERVIEW
    out[path] = splice(path.read_text(encoding="utf-8"), overview(results))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        print("usage: python -m pausepoint_conformance.peers.matrix  (from the repository "
              "root: rewrites the generated blocks of docs/peers.md and each peer's page)",
              file=sys.stderr)
        return 2
    for path, text in pages().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
