"""Trace validation without TLC: the recorded NDJSON traces (tla/traces/, also validated by TLC
with tla/TracePausepoint.tla, tla/results/TracePausepoint.txt) replay against the Python
model line by line; altered traces do not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pausepoint.system import model as m
from pausepoint.system import trace as tr
from pausepoint_conformance.modelcheck import lockstep as mc

MODELS = mc.load_manifest()["models"]
TRACES = [mc.TLA_DIR / t for t in MODELS["TracePausepoint"]["traces"]]


def _load(path: Path) -> list[dict[str, Any]]:
    return tr.parse(path.read_text())


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_recorded_trace_validates(path: Path) -> None:
    recs = _load(path)
    assert recs[0]["format"] == tr.FORMAT
    v = tr.validate(recs)
    assert v.ok, v.message
    assert v.lines == len(recs)


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_recorded_trace_is_the_seeded_random_walk(path: Path) -> None:
    """The committed traces are reproducible: walk-<model>-seed<N>.ndjson is
    trace.random_walk(<model's constants>, 80, N)."""
    model, seed = path.stem.removeprefix("walk-").split("-seed")
    cfg = mc.config_from_constants(MODELS[model]["constants"])
    assert tr.random_walk(cfg, 80, int(seed)).dumps() == path.read_text()


@pytest.mark.parametrize("seed", range(12))
def test_random_walks_validate(seed: int) -> None:
    name = ("MCPausepoint", "MCPausepointLive", "SIMPausepoint")[seed % 3]
    cfg = mc.config_from_constants(MODELS[name]["constants"])
    w = tr.random_walk(cfg, 120, seed)
    assert tr.validate(tr.parse(w.dumps())).ok


def test_every_action_appears_in_the_recorded_traces() -> None:
    seen = {rec["action"] for p in TRACES for rec in _load(p)[2:]}
    assert seen == set(tr.ARG_NAMES), set(tr.ARG_NAMES) - seen


def test_header_roundtrip() -> None:
    for spec in MODELS.values():
        if "constants" in spec and not mc.is_run_level(spec):
            cfg = mc.config_from_constants(spec["constants"])
            assert tr.config_from_header(tr.header(cfg)) == cfg


def _tampered(kind: str) -> list[dict[str, Any]]:
    recs = copy.deepcopy(_load(TRACES[0]))  # the walk of MCPausepoint: one run, a consume
    idx = next(i for i, r in enumerate(recs) if r.get("result") == "consumed")
    if kind == "result":
        recs[idx]["result"] = "replayed"
    elif kind == "state":
        recs[idx]["state"]["runs"][0]["slots"][-1]["consumes"] = 2
    elif kind == "args":
        recs[idx]["args"]["resumer"] = 5
    elif kind == "drop":
        del recs[idx - 1]
    elif kind == "action":
        recs[idx]["action"] = "Expire"
    elif kind == "now":
        recs[idx]["state"]["now"] += 1
    return recs


@pytest.mark.parametrize("kind", ["result", "state", "args", "drop", "action", "now"])
def test_altered_trace_is_refused(kind: str) -> None:
    v = tr.validate(_tampered(kind))
    assert not v.ok
    assert "line" in v.message


def test_partial_observations_validate() -> None:
    """An implementation records what it can observe: fields may be left out."""
    recs = copy.deepcopy(_load(TRACES[0]))
    for rec in recs[1:]:
        st = rec["state"]
        st.pop("resumers")
        for run in st["runs"]:
            run.pop("journal")
            for x in run["slots"]:
                x.pop("version")
    assert tr.validate(recs).ok


def test_trace_lines_name_spec_actions() -> None:
    spec = (mc.TLA_DIR / "Pausepoint.tla").read_text()
    for action, args in tr.ARG_NAMES.items():
        head = action + ("(" if args else " ==")
        assert f"\n{head}" in spec, action


def test_commit_result_is_the_lifecycle_answer() -> None:
    cfg = mc.config_from_constants(MODELS["MCPausepointLive"]["constants"])
    s = m.initial(cfg)
    assert m.commit_result(cfg, s, 0) is None
    path = ["StartRun", "Execute", "RecordTurn", "ResumeRead"]
    for action in path:
        s = next(x.state for x in m.successors(cfg, s) if x.action == action)
    assert m.commit_result(cfg, s, 0) == "consumed"
    json.dumps(tr.observe(s))  # JSON-ready
