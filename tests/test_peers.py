"""The peers' pages publish what a fresh measurement reports, and the suite itself needs none
of the peers' frameworks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pausepoint_conformance.peers import GUARDED, PEERS, matrix
from scratch import fast_tempfiles

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fresh_pages() -> Iterator[dict[Path, str]]:
    with fast_tempfiles():
        yield matrix.pages(ROOT)


def test_every_peer_has_a_page_linked_from_the_overview() -> None:
    overview = (ROOT / matrix.OVERVIEW).read_text(encoding="utf-8")
    for peer in (*PEERS, *GUARDED):
        assert (ROOT / peer.doc).is_file(), peer
        assert f"]({Path(peer.doc).relative_to('docs')})" in overview, peer


def test_the_docs_publish_the_current_matrices(fresh_pages: dict[Path, str]) -> None:
    assert len(fresh_pages) == len(PEERS) + len(GUARDED) + 1
    stale = [str(p.relative_to(ROOT)) for p, text in fresh_pages.items()
             if p.read_text(encoding="utf-8") != text]
    assert not stale, f"{stale} are stale: run python -m pausepoint_conformance.peers.matrix"


def test_the_overview_has_a_row_per_clause_and_a_column_per_peer(
        fresh_pages: dict[Path, str]) -> None:
    from pausepoint.core.clauses import CLAUSES

    text = fresh_pages[ROOT / matrix.OVERVIEW]
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [c.id for c in CLAUSES]
    assert all(r.count("|") == 3 + len(PEERS) + len(GUARDED) for r in rows)


def test_importing_the_suite_does_not_need_a_peer_framework() -> None:
    code = ("import sys, pausepoint_conformance, pausepoint_conformance.cli.main, "
            "pausepoint_conformance.suite.runner, pausepoint_conformance.peers, "
            "pausepoint_conformance.peers.matrix; "
            "assert not any(m.split('.')[0] in ('langgraph', 'langchain_core', 'pydantic_ai', "
            "'agents', 'workflows', 'dbos', 'agent_framework') for m in sys.modules), "
            "'a peer framework was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub and the docs site make it."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -")
    return kept.strip().replace(" ", "-")


def test_every_named_reproduction_is_a_heading_with_executed_code() -> None:
    for peer in (*PEERS, *GUARDED):
        for r in peer.reproductions:
            text = (ROOT / (r.page or peer.doc)).read_text(encoding="utf-8")
            sections = {_slug(part.split("\n", 1)[0]): part
                        for part in text.split("\n### ")[1:]}
            assert r.anchor in sections, (peer.name, r.anchor)
            body = sections[r.anchor].split("\n## ")[0]
            assert "```python" in body, (peer.name, r.anchor)
