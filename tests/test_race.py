"""Concurrent resumers (clauses ``resume.consume.single-winner``, ``race.decided-once``,
``replay.same-response``, ``replay.different-response.conflict``, ``expiry.no-consume-after``,
``cancel.distinct``): worker processes -- separate interpreters with their own connections,
like separate resume servers -- race to decide one pause on a shared SQLite file or PostgreSQL
schema.  Exactly one winner per consumed pause; every loser gets a definite answer naming the
state that won; an answer racing the expiry sweeper or a cancel is decided once.

A deliberately broken ledger whose transition ignores the version it read is caught.

The run level (``run.*``): restarters, resumers and cancellers as processes on parent and child
runs; no effect twice, none past an unanswered question, none after a cancel, one winner per
pause -- and the issue's bugs put back (no fencing, a continuation for any step) are caught.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pausepoint_conformance.adapters.loader import make_adapter
from pausepoint_conformance.faults.race import (
    ADAPTER_KINDS,
    KINDS,
    RaceReport,
    race_adapter,
    run_races,
)
from pausepoint_conformance.faults.race import main as race_main
from pausepoint_conformance.faults.runrace import run_race
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite, save_key
from pg import pg_spec

PROCESSES = 4
ROUNDS = 15


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[StoreSpec, str]]:
    spec = fresh_sqlite(tmp_path, "race.db") if request.param == "sqlite" else pg_spec("pp_race")
    key = str(tmp_path / "key.ed25519")
    save_key(key)
    yield spec, key
    drop(spec)


def test_one_winner_and_a_definite_answer_for_every_loser(shared: tuple[StoreSpec, str]) -> None:
    spec, key = shared
    report: RaceReport = run_races(spec, key, processes=PROCESSES, rounds=ROUNDS)
    print("\n".join(report.lines()))
    assert report.violations == [], "\n".join(report.violations)
    assert report.races == ROUNDS * len(KINDS)
    for kind in ("same", "differ"):  # every resume-only race: one winner, never none
        assert report.stats[kind].winners == ROUNDS
        assert report.stats[kind].decided == {"consumed": ROUNDS}
    assert report.stats["same"].outcomes["replay"] == ROUNDS * (PROCESSES - 1)
    assert report.stats["differ"].outcomes["refused:response_conflict"] > 0
    for kind in ("expiry", "cancel"):
        s = report.stats[kind]
        assert s.winners == s.decided["consumed"] <= ROUNDS
        assert sum(s.decided.values()) == ROUNDS


def test_a_version_blind_ledger_is_caught(shared: tuple[StoreSpec, str]) -> None:
    """The check-then-act bug: several resumers 'win' the same pause and the expiry or cancel
    overwrites a consume."""
    spec, key = shared
    report = run_races(spec, key, processes=PROCESSES, rounds=3, broken="version-blind")
    print("\n".join(report.lines()))
    assert report.winners > report.stats["same"].races + report.stats["differ"].races
    assert any("winners of a consumed pause" in v for v in report.violations)
    assert any("changed state" in v for v in report.violations)


# -- any implementation, through the adapter protocol ------------------------------------------

BROKEN = Path(__file__).parent / "broken"


def _race_over_stdio(command: str, rounds: int) -> RaceReport:
    adapter, name = make_adapter(f'cmd:"{command}"', timeout=120)
    try:
        return race_adapter(adapter, racers=PROCESSES, rounds=rounds, name=name)
    finally:
        adapter.close()


def test_the_reference_over_stdio_is_raced_through_the_protocol() -> None:
    """The race tool drives any implementation the way ``pausepoint conform --adapter`` does:
    here the reference as a subprocess speaking the stdio protocol."""
    command = f"{sys.executable} -m pausepoint_conformance.adapters.stdio_reference"
    report = _race_over_stdio(command, rounds=3)
    print("\n".join(report.lines()))
    assert report.violations == [], "\n".join(report.violations)
    assert report.races == 3 * len(ADAPTER_KINDS)
    assert report.winners == report.races
    assert report.stats["same"].outcomes["replay"] == 3 * (PROCESSES - 1)
    assert report.stats["differ"].outcomes["refused:response_conflict"] > 0


def test_a_double_consuming_implementation_over_stdio_is_caught() -> None:
    """tests/broken/double_consume.py (a check-then-act ledger), raced over stdio: several
    racers win one pause."""
    report = _race_over_stdio(f"{sys.executable} {BROKEN / 'double_consume.py'}", rounds=2)
    print("\n".join(report.lines()))
    assert report.winners > report.races
    assert any("winners of a consumed pause" in v for v in report.violations)


def test_the_race_command_takes_an_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} {BROKEN / 'double_consume.py'}"
    code = race_main(["--adapter", f'cmd:"{command}"', "--processes", "3", "--rounds", "1"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "winners of a consumed pause" in out


# -- the run level: restarters, resumers and cancellers -----------------------------------------


def test_the_run_race_finds_nothing_on_the_reference(shared: tuple[StoreSpec, str]) -> None:
    """Two restarters (one of them taking runs over in half the rounds) beside two resumers
    and two cancellers, on parent and child runs: no effect twice, none past an unanswered
    question, none started after a cancel took its run over, one winner per pause."""
    spec, key = shared
    report = run_race(spec, key, restarters=2, resumers=2, cancellers=2, rounds=8)
    print("\n".join(report.lines()))
    assert report.violations == [], "\n".join(report.violations)
    assert report.rounds == 8
    assert report.effects > 0 and report.winners > 0
    assert report.summary().startswith("8 rounds, 2 restarters, 2 resumers, 2 cancellers: ")


@pytest.mark.parametrize(("broken", "found"), [
    ("step-blind", "past the unanswered"),
    ("unfenced", ""),  # applied twice, or after the cancel: whichever the race hits first
])
def test_a_broken_run_level_is_caught(tmp_path: Path, broken: str, found: str) -> None:
    """The same race with the issue's bugs put back: a continuation for any step pays past
    the unanswered approval; without fencing a run taken over or cancelled applies an effect
    again or after its cancel.  Each is found within the rounds given (it stops at the
    first)."""
    spec = fresh_sqlite(tmp_path, "run-race.db")
    key = str(tmp_path / "key.ed25519")
    save_key(key)
    report = run_race(spec, key, restarters=2, resumers=2, cancellers=1, rounds=300,
                      broken=broken, stop_on_violation=True)
    print("\n".join(report.lines()))
    assert report.violations, f"{broken} was not caught in {report.rounds} rounds"
    assert any(found in v for v in report.violations)


def test_the_race_command_runs_the_run_level(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = race_main(["--store", "sqlite", "--restarters", "1", "--resumers", "1",
                      "--cancellers", "1", "--rounds", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 rounds, 1 restarters, 1 resumers, 1 cancellers: " in out
    assert "0 violations" in out


def test_the_run_race_witness_counts_only_what_its_unit_committed(tmp_path: Path) -> None:
    """A take-over or a win noted inside a unit of work that the store then rolls back (a
    deadlock victim, run again from its start) did not happen: the witness keeps it only once
    the unit commits (its end, or ``commit_so_far``).  Noted at once, it made a retried
    cancel look like one that took the run over before a legitimate effect."""
    from pausepoint.stores.sqlite import SqliteStore
    from pausepoint_conformance.faults.runrace import WitnessedBundle, WitnessWorld

    world = WitnessWorld("w")
    store = SqliteStore(str(tmp_path / "w.db"))
    bundle = WitnessedBundle(store, store.ledger, store.runs, store.effects, store.payloads,
                             store.checkpoints, world=world)
    try:
        with pytest.raises(RuntimeError), bundle.unit_of_work():
            world.note("cancelled", ("rolled-back", 1))
            with bundle.unit_of_work():  # a nested unit joins the outer one
                world.note("consumed", "rolled-back/0/0")
            raise RuntimeError("the store aborted the unit")
        assert (world.cancelled, world.consumed) == ([], [])
        with bundle.unit_of_work():
            world.note("cancelled", ("committed", 2))
            assert world.cancelled == []  # not before the commit
        assert world.cancelled == [("committed", 2)]
        with bundle.unit_of_work():
            world.note("consumed", "early/0/0")
            bundle.commit_so_far()
            assert world.consumed == ["early/0/0"]
            world.note("consumed", "late/0/0")
            with pytest.raises(RuntimeError):
                raise RuntimeError("inside, caught: the unit still commits")
        assert world.consumed == ["early/0/0", "late/0/0"]
        world.note("consumed", "outside/0/0")  # no unit: at once
        assert world.consumed[-1] == "outside/0/0"
    finally:
        store.close()
