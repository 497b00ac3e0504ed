"""Every bad input a newcomer can give the command line gets one line on stderr that names the
input and says what to do, no traceback, and exit status 2 -- before any run starts, so a long
run's results are never lost to a typo in an output path."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pausepoint_conformance.cli.main import main as cli
from pausepoint_conformance.modelcheck import lockstep as mc

PY = sys.executable

# Each case: (id, the arguments (``{tmp}`` is a scratch folder), text the error must contain).
CASES: list[tuple[str, list[str], str]] = [
    ("adapter-file-missing", ["conform", "--adapter", "{tmp}/nowhere.py:make"], "nowhere.py"),
    ("adapter-file-syntax", ["conform", "--adapter", "{tmp}/syntax.py:make"], "SyntaxError"),
    ("factory-raises", ["conform", "--adapter", "{tmp}/factories.py:boom"], "no database"),
    ("factory-non-adapter", ["conform", "--adapter", "{tmp}/factories.py:number"],
     "not an adapter"),
    ("module-missing", ["conform", "--adapter", "no_such_module_xyz:make"],
     "no_such_module_xyz"),
    ("cmd-unbalanced-quote", ["conform", "--adapter", "cmd:python -c 'print(1)"],
     "No closing quotation"),
    ("cmd-not-found", ["conform", "--adapter", "cmd:no-such-program-xyz --flag"],
     "no-such-program-xyz"),
    ("cmd-empty", ["conform", "--adapter", "cmd:"], "cmd:"),
    ("reference-unknown", ["conform", "--adapter", "reference:oracle"], "reference:oracle"),
    ("json-missing-folder", ["conform", "--json", "{tmp}/no/such/dir/r.jsonl"], "--json"),
    ("json-under-a-file", ["conform", "--json", "{tmp}/a-file/r.jsonl"], "--json"),
    ("json-is-a-folder", ["conform", "--json", "{tmp}"], "--json"),
    ("junit-missing-folder", ["conform", "--junit", "{tmp}/no/such/dir/r.xml"], "--junit"),
    ("scratch-missing", ["conform", "--scratch", "{tmp}/no-such-scratch"], "--scratch"),
    ("timeout-zero", ["conform", "--timeout", "0"], "--timeout"),
    ("timeout-negative", ["conform", "--timeout", "-5"], "--timeout"),
    ("timeout-not-a-number", ["conform", "--timeout", "soon"], "--timeout"),
    ("only-nothing", ["conform", "--only", "no-such-check-xyz"], "nothing selected"),
    ("no-checks-no-vectors", ["conform", "--no-checks"], "nothing selected"),
    ("vectors-missing", ["conform", "--vectors", "{tmp}/no-vectors"], "no-vectors"),
    ("vectors-empty-folder", ["conform", "--vectors", "{tmp}/empty"], "no vector files"),
    ("vectors-garbage", ["conform", "--vectors", "{tmp}/garbage.json"], "garbage.json"),
    ("vectors-wrong-shape", ["conform", "--vectors", "{tmp}/wrong.json"], "wrong.json"),
    ("scenarios-out-is-a-file", ["scenarios", "--out", "{tmp}/a-file"], "--out"),
    ("scenarios-bad-family", ["scenarios", "--out", "{tmp}/v", "--family", "nope"], "basic"),
    ("fuzz-jobs-zero", ["fuzz", "--jobs", "0"], "--jobs"),
    ("fuzz-batch-negative", ["fuzz", "--batch", "-1"], "--batch"),
    ("fuzz-count-zero", ["fuzz", "--count", "0"], "--count"),
    ("fuzz-sqlite-missing-folder", ["fuzz", "--store", "sqlite:{tmp}/no/such/x.db"],
     "--store"),
    ("fuzz-sqlite-not-a-database", ["fuzz", "--store", "sqlite:{tmp}/garbage.json"],
     "cannot open"),
    ("fuzz-postgres-unreachable",
     ["fuzz", "--store", "postgresql://nobody@127.0.0.1:1/none"], "cannot open"),
    ("fuzz-password-on-the-command-line",
     ["fuzz", "--store", "postgresql://nobody:secret@127.0.0.1:1/none"], "PAUSEPOINT_PG_DSN"),
    ("fuzz-store-unknown", ["fuzz", "--store", "oracle:x"], "--store"),
    ("check-model-bogus", ["check", "--model", "bogus"], "MCPausepoint"),
    ("check-tla-dir-missing", ["check", "--tla-dir", "{tmp}/no-tla"], "--tla-dir"),
    ("check-tla-dir-empty", ["check", "--tla-dir", "{tmp}/empty"], "manifest.json"),
    ("check-tla-dir-garbage", ["check", "--tla-dir", "{tmp}/bad-tla"], "manifest.json"),
    ("check-tla-dir-incomplete", ["check", "--tla-dir", "{tmp}/thin-tla"], "missing"),
    ("check-trace-missing", ["check", "--trace", "{tmp}/no.ndjson"], "no.ndjson"),
    ("check-trace-garbage", ["check", "--trace", "{tmp}/garbage.json"], "garbage.json"),
    ("check-trace-not-objects", ["check", "--trace", "{tmp}/numbers.ndjson"],
     "numbers.ndjson"),
    ("check-workers-zero", ["check", "--workers", "0"], "--workers"),
    ("check-tlc-missing", ["check", "--tlc", "{tmp}/no-tla2tools.jar"], "--tlc"),
]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "syntax.py").write_text("def make(:\n")
    (tmp_path / "factories.py").write_text(
        "def boom():\n    raise RuntimeError('no database at /var/lib/x')\n"
        "def number():\n    return 42\n")
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "empty").mkdir()
    (tmp_path / "garbage.json").write_text("{ this is not json\n")
    (tmp_path / "wrong.json").write_text('{"cases": "none", "ttl_ms": -1}\n')
    (tmp_path / "numbers.ndjson").write_text("1\n2\n")
    (tmp_path / "bad-tla").mkdir()
    (tmp_path / "bad-tla" / "manifest.json").write_text("[1, 2")
    (tmp_path / "thin-tla").mkdir()
    (tmp_path / "thin-tla" / "manifest.json").write_text((mc.TLA_DIR / mc.MANIFEST).read_text())
    return tmp_path


def _run(argv: list[str]) -> int:
    try:
        return cli(argv)
    except SystemExit as exc:  # argparse's errors exit
        return int(exc.code or 0)


@pytest.mark.parametrize(("argv", "named"), [pytest.param(a, n, id=i) for i, a, n in CASES])
def test_bad_input_is_one_line_on_stderr_and_exit_2(
        argv: list[str], named: str, scratch: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scratch)
    code = _run([a.replace("{tmp}", str(scratch)) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert named in lines[0], lines[0]
    assert lines[0].startswith(f"pausepoint {argv[0]}"), lines[0]
    assert "errors.pydantic.dev" not in err
    assert out == "", out  # nothing ran


def test_the_dsn_is_not_echoed(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["fuzz", "--store", "postgresql://nobody:secret@127.0.0.1:1/none"]) == 2
    assert "secret" not in capsys.readouterr().err


def test_postgres_store_without_the_extra_names_it(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real: Callable[..., object] = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "psycopg" else real(name, *a))
    assert _run(["fuzz", "--store", "postgresql://u@127.0.0.1/x"]) == 2
    assert "pausepoint[postgres]" in capsys.readouterr().err


def test_the_timeout_bounds_the_handshake(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A program that never answers hello is given --timeout, not a fixed minute: the report
    says so (the implementation failed, so this is exit 1, not a usage error)."""
    hang = tmp_path / "hang.py"
    hang.write_text("import time\ntime.sleep(600)\n")
    code = _run(["conform", "--adapter", f"cmd:{PY} {hang}", "--timeout", "1.5", "-q",
                 "--json", str(tmp_path / "r.jsonl")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "no response to hello within 1.5 s" in out
    assert "Traceback" not in out + err
    # the table of clauses, every one errored for the same reason, is not printed
    assert "lifecycle.states" not in out
    assert (tmp_path / "r.jsonl").read_text().count('"error"') >= 1


def test_every_subcommand_help_works(capsys: pytest.CaptureFixture[str]) -> None:
    from pausepoint_conformance.cli.main import SUBCOMMANDS

    for mod in SUBCOMMANDS:
        name = mod.rsplit("cmd_", 1)[1]
        assert _run([name, "--help"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_peer_without_its_extra_names_the_extra(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A module that imports a framework that is not installed names what to install."""
    # import langgraph (and any of its submodules an earlier test imported) -> ImportError
    for name in ["langgraph", *[m for m in sys.modules if m.startswith("langgraph.")]]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [m for m in sys.modules if m.startswith("pausepoint_conformance.peers.")]:
        monkeypatch.delitem(sys.modules, name)
    code = _run(["conform", "--adapter",
                 "pausepoint_conformance.peers.langgraph_peer:make_sqlite"])
    err = capsys.readouterr().err
    assert code == 2
    assert "langgraph" in err and "pausepoint[peers]" in err, err
