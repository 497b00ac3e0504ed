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
