"""`pausepoint check`: passes without TLC (lockstep, constants, traces), fails when the recorded
state set or a trace no longer agrees, and runs TLC over the manifest when a jar is given."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pausepoint_conformance.cli import main as cli
from pausepoint_conformance.modelcheck import lockstep as mc


def test_check_passes_without_tlc(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    assert cli.main(["check"]) == 0
    out = capsys.readouterr().out
    assert "check passed" in out
    assert "MCPausepoint" in out and "equal" in out


def _copy_tla(tmp_path: Path) -> Path:
    dst = tmp_path / "tla"
    shutil.copytree(mc.TLA_DIR, dst)
    return dst


def test_check_fails_on_a_changed_state_set(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    tla = _copy_tla(tmp_path)
    spec = mc.load_manifest(tla)["models"]["MCPausepointLive"]
    fps = mc.read_fingerprints(tla / spec["states_file"])
    mc.write_fingerprints(tla / spec["states_file"], fps[:-1] + [fps[-1] ^ 1])
    code = cli.main(["check", "--tla-dir", str(tla), "--model", "MCPausepointLive"])
    assert code == 1
    assert "check failed" in capsys.readouterr().out


def test_check_fails_on_a_bad_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = mc.TLA_DIR / mc.load_manifest()["models"]["TracePausepoint"]["traces"][0]
    lines = src.read_text().splitlines()
    bad = tmp_path / "bad.ndjson"
    bad.write_text("\n".join(lines[:-1]) + "\n" + lines[-1].replace('"now":0', '"now":7')
                   .replace('"now":1', '"now":7') + "\n")
    code = cli.main(["check", "--model", "TracePausepoint", "--trace", str(bad)])
    assert code == 1


def test_check_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["check", "--help"])
    out = capsys.readouterr().out
    for word in ("lockstep", "TLC", "Examples", "--tlc", "--record", "trace"):
        assert word in out


@pytest.mark.skipif(not mc.tlc_jar(), reason="TLC not available (set TLA2TOOLS_JAR)")
def test_check_with_tlc(capsys: pytest.CaptureFixture[str]) -> None:
    jar = os.environ["TLA2TOOLS_JAR"]
    assert cli.main(["check", "--tlc", jar, "--model", "MCPausepointLive",
                     "--model", "MCPausepointBugExpiry", "--model", "TracePausepoint"]) == 0
    assert "Model checking completed. No error has been found." in capsys.readouterr().out


def test_check_fails_when_a_spec_file_changed_without_rerecorded_results(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The manifest records the SHA-256 of every .tla and .cfg file next to TLC's results: an
    edit to the spec that was never re-run through TLC fails `pausepoint check` (CI)."""
    tla = _copy_tla(tmp_path)
    assert mc.source_problems(tla) == []
    assert cli.main(["check", "--tla-dir", str(tla), "--model", "MCPausepointLive"]) == 0
    capsys.readouterr()
    spec = tla / "Pausepoint.tla"
    spec.write_text(spec.read_text().replace("TTL ticks after", "TTL ticks after (edited)"))
    (tla / "MCNew.cfg").write_text("INIT Init\n")
    problems = mc.source_problems(tla)
    assert problems == ["Pausepoint.tla: changed since TLC's results were recorded",
                        "MCNew.cfg: new, no TLC results recorded with it"]
    assert cli.main(["check", "--tla-dir", str(tla), "--model", "MCPausepointLive"]) == 1
    out = capsys.readouterr().out
    assert "Pausepoint.tla: changed since TLC's results were recorded" in out
    assert "check failed" in out


def test_tlc_state_sets_are_compared_state_for_state(tmp_path: Path) -> None:
    """`check --tlc` compares the states TLC dumps with the recorded set, not their number:
    one state swapped for another, same count, is two problems."""
    spec = mc.load_manifest()["models"]["MCPausepointLive"]
    head = (mc.TLA_DIR / spec["dump_head_file"]).read_text()
    dump = tmp_path / "states.dump"
    dump.write_text(head)
    # a dump of only some states: the rest are recorded states TLC "no longer reaches"
    problems = mc.state_set_problems(dump, spec)
    assert len(problems) == 1 and "no longer reaches" in problems[0]
    # a state that is not in the recorded set
    dump.write_text(head.replace("now = 0", "now = 7", 1))
    problems = mc.state_set_problems(dump, spec)
    assert any("not in the recorded set" in p for p in problems)
