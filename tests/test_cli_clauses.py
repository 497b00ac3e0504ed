"""``pausepoint clauses``: the JSON list is exactly the catalogue's ids and summaries, and the
table lists every id."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pausepoint.core.clauses import CLAUSES, Group
from pausepoint.system import model as m
from pausepoint.system import runmodel as rm
from pausepoint_conformance.cli.main import main


def test_json_is_a_list_of_id_summary_objects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clauses", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [{"id": o["id"], "summary": o["summary"]} for o in out] == [
        {"id": c.id, "summary": c.summary} for c in CLAUSES]
    assert all(list(obj) == ["id", "summary", "model_checked"] for obj in out)


def test_json_with_a_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clauses", "--json", "--group", Group.TOKENS.value]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [{"id": o["id"], "summary": o["summary"]} for o in out] == [
        {"id": c.id, "summary": c.summary} for c in CLAUSES if c.group is Group.TOKENS]
    assert out, "the tokens group has clauses"


@pytest.mark.parametrize("columns", ["80", "160"])
def test_table_lists_every_id(capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    """Every id appears whole (ids are never folded across lines) at the usual widths."""
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["clauses"]) == 0
    out = capsys.readouterr().out
    for c in CLAUSES:
        assert re.search(rf"(?<![\w.-]){re.escape(c.id)}(?![\w.-])", out), c.id
    assert f"{len(CLAUSES)} clauses" in out


def test_table_with_a_group_lists_only_that_group(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["clauses", "--group", Group.EXPIRY.value]) == 0
    out = capsys.readouterr().out
    for c in CLAUSES:
        present = re.search(rf"(?<![\w.-]){re.escape(c.id)}(?![\w.-])", out) is not None
        assert present == (c.group is Group.EXPIRY), c.id


def test_model_checked_clauses_are_marked(capsys: pytest.CaptureFixture[str]) -> None:
    """Each model-checked clause names the properties that check it -- properties of the
    Python model and, by the same names, of the TLA+ spec -- and at least 40 are."""
    assert main(["clauses", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    marked = {o["id"]: o["model_checked"] for o in out if o["model_checked"]}
    assert len(marked) >= 40, len(marked)
    tla = Path(__file__).resolve().parents[1] / "tla"
    pause_spec = (tla / "Pausepoint.tla").read_text()
    run_spec = (tla / "PausepointRuns.tla").read_text()
    run_props = {**rm.INVARIANTS, **rm.ACTION_PROPERTIES, **rm.LIVENESS}
    for clause_id, props in marked.items():
        for prop in props:
            assert prop in m.INVARIANTS or prop in m.ACTION_PROPERTIES or prop in run_props
            # the spec defines the property and names the clause in the comment above it
            spec = run_spec if prop in run_props else pause_spec
            head = spec[:spec.index(f"\n{prop} ==")]
            comment = head[head.rindex("\n\n"):]
            assert clause_id in comment, (prop, clause_id)
    assert main(["clauses"]) == 0
    assert f"{len(marked)} model-checked" in capsys.readouterr().out
