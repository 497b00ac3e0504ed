"""The tests catch deliberately broken implementations (conventions: honest tests).

Each broken variant below swaps exactly ONE piece of the reference -- a ledger method, one check
of the lifecycle table, one service method, the signer, the harness's view of the effect
journal -- and runs the assertion logic of the real tests on it.  :func:`caught` makes "the
suite catches it" explicit: the check must raise an ``AssertionError`` whose message matches
what the variant breaks (an unrelated assertion -- a crash inside the code, a different
check's complaint -- is not a catch).  The same check runs on the unbroken implementation
first, in the same test, and must pass, so what is caught is the swapped piece.  Variants of
the lifecycle are machines built from the table's values (``lc.MACHINE.with_row``), handed to
a service subclass -- no module global is patched.  Where the
stateful machine of ``test_stateful.py`` can see the breakage, it is run on the broken variant
too (generation only, bounded examples) and must fail.

=================================  ============================================================
broken variant                     caught by
=================================  ============================================================
consume twice                      ``check_racing_resumes_single_winner`` (test_service)
consume at or after expiry         ``check_resume_at_expiry_refused``; lifecycle refusal order
                                   and invariants; stateful NoConsumeAtOrAfterExpiry
resumable before the write         ``check_failed_turn_write_stays_paused``; stateful
mint before payload validation     ``check_pause_refusals_before_mint``; stateful
                                   RefusalChangesNothing
flipped byte accepted              ``check_flipped_bytes_refused``,
                                   ``check_forged_tokens_refused``; stateful
                                   TokenRedeemsOnlyItsPause
different response replayed        ``check_different_response_conflicts``; lifecycle resume
                                   table; stateful ReplayOnlyTheSameResponse
effect re-run after a resume       ``check_reconciled_effect_not_rerun`` (test_harness)
=================================  ============================================================

The stateful machine runs resumes one after another, so it cannot see a ledger that ignores the
expected version (no two resumes ever read the same version); the threaded race check does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import test_lifecycle
from pausepoint.core import lifecycle as lc
from pausepoint.core.canonical import digest
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims, EffectStatus, PauseRecord
from pausepoint.core.tokens import KeyRing, b64url_decode
from pausepoint.engine.harness import Harness
from pausepoint.engine.service import PauseService
from pausepoint.stores import MemoryStore, SqliteStore, StoreBundle
from pausepoint.stores.memory import MemoryLedger
from pausepoint.stores.sql import SqlLedger
from test_harness import check_reconciled_effect_not_rerun, open_harness
from test_service import (
    check_different_response_conflicts,
    check_failed_turn_write_stays_paused,
    check_flipped_bytes_refused,
    check_forged_tokens_refused,
    check_pause_refusals_before_mint,
    check_racing_resumes_single_winner,
    check_resume_at_expiry_refused,
    make_env,
)
from test_stateful import PauseMachine
from test_stateful import teardown_module as stateful_teardown

STATEFUL_EXAMPLES = 1000
"""Upper bound on the examples the machine may take to find a broken variant.  It stops at the
first failure; in random searches the variants below were found after 5 to 180 examples, and the
search is derandomized (a fixed seed), so a run takes the same path every time."""


def fresh(like: StoreBundle, path: Path) -> StoreBundle:
    """A new, empty store of the same kind as ``like`` (for the broken variant's side)."""
    return MemoryStore() if isinstance(like, MemoryStore) else SqliteStore(path)


def caught(check: Callable[[], object], match: str) -> AssertionError:
    """Run ``check`` against a broken variant: it must fail with an ``AssertionError`` whose
    text (message and the failing expression pytest rewrote into it) matches the regular
    expression ``match`` -- what the variant breaks.  Passing, failing any other way, or an
    assertion about something else fails this test."""
    try:
        check()
    except AssertionError as err:
        if not re.search(match, str(err)):
            pytest.fail(f"the broken variant failed, but not for {match!r}: {err}")
        return err
    pytest.fail("the broken variant passed the check: the suite would not catch it")


def control_then_broken(store: StoreBundle, tmp_path: Path, check: Callable[[Any], None],
                        service_class: type[PauseService], match: str) -> None:
    """``check`` passes on the reference service over ``store``, and is :func:`caught` (for
    ``match``) on ``service_class`` over a fresh store of the same kind."""
    check(make_env(store))
    broken = fresh(store, tmp_path / "b.db")
    try:
        caught(lambda: check(make_env(broken, service_class=service_class)), match)
    finally:
        broken.close()


def machine_catches(machine: type[PauseMachine], match: str) -> AssertionError:
    """Run the stateful machine (generation only, no shrinking, no example database) and
    return the violated invariant or mismatch it found.  Which invariant fires first is up to
    the search; that one does is the point."""
    return caught(lambda: run_state_machine_as_test(machine, settings=settings(
        max_examples=STATEFUL_EXAMPLES, stateful_step_count=50, deadline=None, database=None,
        phases=[Phase.generate], report_multiple_bugs=False, derandomize=True,
        suppress_health_check=list(HealthCheck))), match)


# -- 1. consume twice: a ledger whose conditional update ignores the expected version ---------


class BlindMemoryLedger(MemoryLedger):
    """BROKEN: ``transition`` writes whatever version the row has (no compare-and-set)."""

    def transition(self, interrupt_id: str, expected_version: int, new: lc.PauseState,
                   result: str | None = None) -> bool:
        with self._s._lock:
            row = self._s._pauses.get(interrupt_id)
            if row is None:
                return False
            self._s._pauses[interrupt_id] = attrs.evolve(
                row, state=new, version=row.version + 1,
                result=row.result if result is None else result)
            return True


class BlindSqlLedger(SqlLedger):
    """BROKEN: the conditional ``UPDATE`` lost its ``AND version = ?`` (the parameter is still
    bound, and ignored)."""

    _TRANSITION = SqlLedger._TRANSITION.replace(  # type: ignore[misc]
        "AND version = ?", "AND ? IS NOT NULL")


def version_blind(ledger: Any) -> Any:
    if isinstance(ledger, SqlLedger):
        assert "AND version = ?" in SqlLedger._TRANSITION
        return BlindSqlLedger(ledger._s)
    assert isinstance(ledger, MemoryLedger)
    return BlindMemoryLedger(ledger._s)


def test_consume_twice_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`resume.consume.single-winner`, `resume.consume.at-most-once`."""
    check_racing_resumes_single_winner(make_env(store))
    other = fresh(store, tmp_path / "b.db")
    caught(lambda: check_racing_resumes_single_winner(
        make_env(other, wrap_ledger=version_blind)), "consumed one pause")
    other.close()


# -- 2. consume at or after expiry: the resume rows without their expiry check --------------


def without_expiry(m: lc.Machine) -> lc.Machine:
    """BROKEN: every Resume row of ``m`` minus its expiry check (a live pause answered at or
    after ``expires_at`` is consumed)."""
    for phase in lc.LIVE:
        row = m.index[(lc.Resume, phase)]
        checks = tuple(c for c in row.checks if c.name != "expiry")
        assert len(checks) == len(row.checks) - 1, row
        m = m.with_row(attrs.evolve(row, checks=checks))
    return m


NO_EXPIRY = without_expiry(lc.MACHINE)


class NoExpiryService(PauseService):
    machine = NO_EXPIRY


def test_consume_at_expiry_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`resume.expiry`, `expiry.no-consume-after`: the unbroken service and table pass, the
    variant fails the service check and the lifecycle tests."""
    control_then_broken(store, tmp_path, check_resume_at_expiry_refused, NoExpiryService,
                        "expir")
    test_lifecycle.test_invariants_are_preserved_by_every_step_from_every_reachable_state()
    caught(lambda: test_lifecycle.
           test_invariants_are_preserved_by_every_step_from_every_reachable_state(NO_EXPIRY),
           r"invariants_hold|e\.now < s\.expires_at")
    caught(lambda: test_lifecycle.test_resume_refusal_order_each_check_in_turn(
        test_lifecycle.RESUMABLE, {"now": test_lifecycle.EXPIRES}, ErrorCode.PAUSE_EXPIRED,
        "resume.expiry", NO_EXPIRY), "pause_expired")


def test_consume_at_expiry_is_caught_by_the_stateful_machine() -> None:
    """`expiry.no-consume-after`: the service asks the broken machine, the mirror the table."""
    class Machine(PauseMachine):
        service_class = NoExpiryService

    machine_catches(Machine, r"(?i)expir|consumed|Resume")


# -- 3. resumable before the checkpoint write ----------------------------------------------


class EagerTurnService(PauseService):
    """BROKEN: ``record_turn`` makes the pause resumable, then writes the turn -- whatever the
    write reports."""

    def record_turn(self, interrupt_id: str, turn: str) -> PauseRecord:
        record = self._advance(interrupt_id, lambda _r: lc.RecordTurn(True))
        self.checkpoints.write(record.claims.checkpoint_id, record.claims.thread_id, turn)
        return record


def test_resumable_before_the_write_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`turn.resumable.earned`, `turn.write-failed.stays-paused`."""
    control_then_broken(store, tmp_path, check_failed_turn_write_stays_paused,
                        EagerTurnService, "accepted|resumable")


def test_resumable_before_the_write_is_caught_by_the_stateful_machine() -> None:
    class Machine(PauseMachine):
        service_class = EagerTurnService

    machine_catches(Machine, r"(?i)resumable|turn|RecordTurn")


# -- 4. mint before payload validation -------------------------------------------------------


class MintFirstService(PauseService):
    """BROKEN: ``pause`` mints the token and records the payload first, then validates."""

    def pause(self, *, binding: Any, name: str, payload: object, interrupt_id: str,
              tool_call_id: str = "", checkpoint_id: str | None = None,
              ttl_ms: int | None = None) -> PauseRecord:
        now = self.clock.now()
        text = repr(payload)
        self.signer.mint(Claims(
            interrupt_id=interrupt_id, run_id=binding.run_id, root_run_id=binding.root_run_id,
            session_id=binding.session_id, thread_id=binding.thread_id,
            checkpoint_id=checkpoint_id or "", scope=binding.scope, name=str(name),
            tool_call_id=tool_call_id, payload_digest=digest(text), issued_at=now,
            expires_at=now + (self.ttl_ms if ttl_ms is None else ttl_ms)))
        self.payloads.record(interrupt_id, text)
        return super().pause(binding=binding, name=name, payload=payload,
                             interrupt_id=interrupt_id, tool_call_id=tool_call_id,
                             checkpoint_id=checkpoint_id, ttl_ms=ttl_ms)


def test_mint_before_validation_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`pause.refusal.before-mint`, `pause.payload.schema`."""
    control_then_broken(store, tmp_path, check_pause_refusals_before_mint, MintFirstService,
                        "minted|payload row")


def test_mint_before_validation_is_caught_by_the_stateful_machine() -> None:
    class Machine(PauseMachine):
        service_class = MintFirstService

    machine_catches(Machine, r"(?i)mint|payload|refus")


# -- 5. a token with one flipped byte accepted: a signer that ignores the signature -----------


class SignatureBlindSigner:
    """BROKEN: ``verify`` decodes the claims and never checks the signature."""

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring

    def mint(self, claims: Claims) -> tuple[str, str]:
        return self.ring.mint(claims)

    def verify(self, token: str) -> Claims:
        try:
            return Claims(**json.loads(b64url_decode(token.split(".")[2])))
        except Exception:
            raise PausepointError(ErrorCode.TOKEN_MALFORMED, "token.parse.strict",
                                  "unparseable") from None


def test_flipped_byte_accepted_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`token.integrity`, `resume.token.authentic`, `resume.token.binds-one-pause`."""
    check_flipped_bytes_refused(make_env(store))
    broken = fresh(store, tmp_path / "b.db")
    ring = KeyRing.generate("k1")
    env = make_env(broken, ring=ring, signer=SignatureBlindSigner(ring))
    caught(lambda: check_flipped_bytes_refused(env), "(?i)flip|accepted|token")
    broken.close()
    broken = fresh(store, tmp_path / "c.db")
    caught(lambda: check_forged_tokens_refused(
        make_env(broken, ring=ring, signer=SignatureBlindSigner(ring))), "(?i)forg|accepted|token")
    broken.close()


def test_flipped_byte_accepted_is_caught_by_the_stateful_machine() -> None:
    class Machine(PauseMachine):
        def signer_for(self, ring: KeyRing) -> Any:
            return SignatureBlindSigner(ring)

    machine_catches(Machine, r"(?i)token|forg|redeem")


# -- 6. a different response replayed as the same --------------------------------------------


def digest_blind(m: lc.Machine) -> lc.Machine:
    """BROKEN: the consumed row's same-response check ignores the digest."""
    row = m.index[(lc.Resume, lc.Phase.CONSUMED)]
    same = row.checks[-1]
    assert same.name == "same_response"
    return m.with_row(attrs.evolve(
        row, checks=(*row.checks[:-1], attrs.evolve(same, holds=lambda s, e: True))))


DIGEST_BLIND = digest_blind(lc.MACHINE)


class DigestBlindService(PauseService):
    machine = DIGEST_BLIND


def test_different_response_replayed_is_caught(store: StoreBundle, tmp_path: Path) -> None:
    """`replay.different-response.conflict`, `replay.same-response`: the unbroken service and
    table pass, the variant fails both."""
    control_then_broken(store, tmp_path, check_different_response_conflicts,
                        DigestBlindService, "conflict|replayed")
    test_lifecycle.test_resume_outcome_for_every_reachable_state_and_fact_combination()
    caught(lambda: test_lifecycle.
           test_resume_outcome_for_every_reachable_state_and_fact_combination(DIGEST_BLIND),
           "REPLAYED|response_conflict")


def test_different_response_replayed_is_caught_by_the_stateful_machine() -> None:
    class Machine(PauseMachine):
        service_class = DigestBlindService

    machine_catches(Machine, r"(?i)conflict|replay|Resume")


# -- 7. an effect re-run after a resume: the harness loop ignores FINISHED -------------------


class ForgetfulJournal:
    """BROKEN view of the effect journal, as the harness's effect loop reads it: an effect
    journalled finished reads as never started."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable = inner.durable

    def status(self, run_id: str, key: str) -> EffectStatus | None:
        status: EffectStatus | None = self.inner.status(run_id, key)
        return None if status == EffectStatus.FINISHED else status

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        """An upsert, not a conditional insert: a finished entry is started again."""
        if self.inner.status(run_id, key) == EffectStatus.FINISHED:
            self.inner.settle(run_id, key, EffectStatus.NOT_APPLIED)
        return bool(self.inner.start(run_id, key, epoch, now))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ForgetfulHarness(Harness):
    def _compose(self, bundle: StoreBundle) -> Any:
        deployment = super()._compose(bundle)
        deployment.service.effects = ForgetfulJournal(deployment.service.effects)
        return deployment


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_effect_rerun_after_resume_is_caught(kind: str, tmp_path: Path) -> None:
    """`effect.at-most-once`, `effect.reconcile`."""
    (tmp_path / "real").mkdir()
    real = open_harness(kind, tmp_path / "real")
    check_reconciled_effect_not_rerun(real)
    (tmp_path / "broken").mkdir()
    broken = open_harness(kind, tmp_path / "broken", ForgetfulHarness)
    caught(lambda: check_reconciled_effect_not_rerun(broken), "ran again")


def teardown_module() -> None:
    """The machines run here share test_stateful's temporary directory: remove it."""
    stateful_teardown()
