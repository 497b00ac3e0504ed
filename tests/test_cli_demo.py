"""`pausepoint demo` runs every scene on the embedded default and cites, for each, the clauses
it demonstrates; it checks itself, so an implementation that misbehaves makes it fail."""

from __future__ import annotations

import re

import pytest

from pausepoint.core.clauses import CLAUSE_BY_ID
from pausepoint.engine.harness import Harness
from pausepoint_conformance.cli.main import main as cli

SCENES: dict[str, tuple[str, ...]] = {
    "pause": ("pause.published", "turn.resumable.earned", "run.events.single-terminal"),
    "answer": ("resume.consume.at-most-once", "resume.continuation.recorded-turn"),
    "replay": ("replay.same-response", "effect.at-most-once"),
    "conflict": ("replay.different-response.conflict", "lifecycle.terminal.absorbing"),
    "expiry": ("expiry.transition", "resume.expiry", "expiry.no-consume-after"),
    "unknown outcome": ("effect.unknown-outcome", "resume.unknown-outcome.blocks",
                        "effect.reconcile"),
    "cancel": ("cancel.propagates", "cancel.distinct"),
    "crash and restart": ("durability.token.reissue", "durability.restart"),
}


def _scenes(out: str) -> dict[str, str]:
    """Scene name -> the log lines under its title."""
    parts = re.split(r"(?m)^scene \d+: ", out)[1:]
    return {p.split(" -- ", 1)[0]: p for p in parts}


def test_every_scene_cites_its_clauses(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["demo", "--no-color"]) == 0
    out = capsys.readouterr().out
    scenes = _scenes(out)
    assert list(scenes) == list(SCENES)
    for name, clauses in SCENES.items():
        for clause_id in clauses:
            assert clause_id in CLAUSE_BY_ID
            assert f"[{clause_id}]" in scenes[name], (name, clause_id)
    assert "waiting for a person" in scenes["pause"]   # the pending pause, as shown to a person
    assert "every scene behaved as the contract says" in out


def test_the_demo_fails_when_an_effect_runs_twice(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real = Harness.effect_count
    monkeypatch.setattr(Harness, "effect_count", lambda self, run_id, key:
                        real(self, run_id, key) * 2)
    assert cli(["demo", "--no-color"]) == 1
    assert "demo failed" in capsys.readouterr().out
