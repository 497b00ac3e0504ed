"""Coverage by killed clauses (``tests/broken/_coverage.py``): every MUST clause of the
catalogue is killed by some broken implementation -- a new MUST clause without one, or a lost
kill, fails this test -- and every kill is a clause some conformance check cites."""

from __future__ import annotations

import re
from pathlib import Path

from _coverage import NOT_KILLED_YET, killers, not_killed, report
from _registry import registry

from pausepoint.core.clauses import CLAUSE_BY_ID, Level
from pausepoint_conformance.suite.framework import CHECKS


def test_every_must_clause_is_killed() -> None:
    assert not_killed() == set(), sorted(not_killed())
    assert not NOT_KILLED_YET


def test_the_unkilled_must_clauses_are_exactly_those_listed() -> None:
    assert not_killed() == NOT_KILLED_YET
    assert all(CLAUSE_BY_ID[c].level == Level.MUST for c in NOT_KILLED_YET)


def test_every_killed_clause_is_cited_by_a_check() -> None:
    cited = {c for chk in CHECKS for c in chk.clauses}
    killed = {c for c, names in killers().items() if names}
    assert killed and killed <= cited, killed - cited


def test_the_report_names_every_must_clause_and_its_killers() -> None:
    text = report()
    must = [c for c in CLAUSE_BY_ID.values() if c.level == Level.MUST]
    assert text.startswith(f"{len(must) - len(NOT_KILLED_YET)} of {len(must)} MUST clauses")
    for c in must:
        assert f"| `{c.id}` |" in text
    assert text.count("**not killed**") == len(NOT_KILLED_YET)
    assert "`double_consume`" in text and len(registry()) >= 33


def test_the_known_limitations_list_the_unkilled_clauses() -> None:
    text = (Path(__file__).resolve().parents[1] / "spec" / "known-limitations.md").read_text(
        encoding="utf-8")
    section = text.split("## Cited is not killed", 1)[1]
    listed = set(re.findall(r"^\| `([a-z.-]+)` \|", section, flags=re.MULTILINE))
    assert listed == NOT_KILLED_YET
    if not NOT_KILLED_YET:
        assert "every must clause is killed" in section.lower()
