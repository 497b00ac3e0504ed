"""Ports: what the services need from the world, named as protocols.

The core names these; stores, clocks, signers and sinks implement them; one composition function
(:func:`pausepoint.engine.compose.compose`) wires a deployment.  Nothing reaches around it.

Times are integer milliseconds since the epoch (or since any origin a test clock chooses).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from pausepoint.core.lifecycle import PauseState
from pausepoint.core.runs import RunState
from pausepoint.core.runs import RunStatus as RunStatus  # the run table's, re-exported
from pausepoint.core.values import record


@record
class Claims:
    """What a pause token asserts (clause ``token.claims``)."""

    interrupt_id: str
    run_id: str
    root_run_id: str
    session_id: str
    thread_id: str
    checkpoint_id: str
    scope: str
    name: str
    tool_call_id: str
    payload_digest: str
    issued_at: int
    expires_at: int
    v: int = 1


@record
class PauseRecord:
    """One ledger row: the pause, its binding, its token and its lifecycle state.

    ``payload`` and ``result`` are canonical JSON text.  ``result`` is the first resume's result,
    returned again to a replay of the same response.  ``version`` increases by one on every
    state change; the ledger's conditional update compares it (single winner)."""

    claims: Claims
    kid: str
    token: str
    payload: str
    state: PauseState
    parent_run_id: str = ""
    result: str | None = None
    version: int = 0

    @property
    def interrupt_id(self) -> str:
        return self.claims.interrupt_id

    @property
    def run_id(self) -> str:
        return self.claims.run_id


@runtime_checkable
class Ledger(Protocol):
    """Issued pauses and their states.  ``transition`` is the single-winner conditional update:
    it writes ``new`` only if the stored row still has ``expected_version`` and returns whether
    it did.  Every method commits durably before it returns (``durable`` stores)."""

    durable: bool

    def issue(self, record: PauseRecord, *, fence: int | None = None) -> bool:
        """Insert the row; False (and no change) if this interrupt id is already issued.
        Refused with ``key_unknown`` (and no change) if ``record.kid`` was retired by
        :meth:`retire_key` -- checked under the same lock (token.rotation.drain).  With
        ``fence`` (an epoch), the insert is conditional on the record's run still carrying it,
        in the same atomic write; False (and no change) if not (``run.ownership.fencing``)."""
        ...

    def get(self, interrupt_id: str) -> PauseRecord | None: ...

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool: ...

    def set_result(self, interrupt_id: str, result: str) -> None:
        """Record the first resume's result, once (a second call changes nothing)."""
        ...

    def by_run(self, run_id: str) -> Sequence[PauseRecord]: ...

    def outstanding(self) -> Sequence[PauseRecord]:
        """Rows whose phase is paused, resumable or unknown_outcome."""
        ...

    def outstanding_for_key(self, kid: str) -> int:
        """How many outstanding rows carry a token signed by ``kid`` (the drain proof)."""
        ...

    def retire_key(self, kid: str) -> int:
        """The drain proof of ``kid``; when it is 0, ``kid`` is marked retired in the same
        atomic step, and no row signed by it is issued afterwards."""
        ...


class ConsumingLedger(Protocol):
    """What a ledger may offer beyond :class:`Ledger`: a resume's consume as one atomic
    conditional write (one round trip to a database server), where a read and a ``transition``
    take two.  Optional: the services use it only when the ledger's own class defines it."""

    def consume(self, claims: Claims, token: str, expected: PauseState, new: PauseState,
                checkpoints: CheckpointStore) -> tuple[PauseRecord, str | None] | None:
        """Write ``new`` over the pause of ``claims`` and ``token`` only if its stored state
        is exactly ``expected`` -- one winner among any number of racing calls -- and return
        the record as written with the turn of ``claims.checkpoint_id`` (as ``checkpoints``
        holds it); None, and no change, when the write did not land."""
        ...


@runtime_checkable
class CheckpointStore(Protocol):
    """Turn checkpoints: what a run needs to continue.  ``write`` returns whether the write was
    durably committed -- the only thing that may make a pause resumable."""

    durable: bool

    def write(self, checkpoint_id: str, thread_id: str, turn: str) -> bool: ...

    def read(self, checkpoint_id: str) -> str | None: ...

    def latest(self, thread_id: str) -> str | None:
        """The id of the thread's newest checkpoint, if any."""
        ...


@runtime_checkable
class PayloadStore(Protocol):
    durable: bool

    def record(self, interrupt_id: str, payload: str) -> None: ...

    def get(self, interrupt_id: str) -> str | None: ...


class EffectStatus(enum.StrEnum):
    STARTED = "started"
    FINISHED = "finished"
    NOT_APPLIED = "not_applied"
    COMPENSATED = "compensated"


@runtime_checkable
class EffectJournal(Protocol):
    """Brackets every side effect: ``start`` before it runs, ``finish`` after it returns.
    A ``started`` entry found after a stop is an unknown outcome."""

    durable: bool

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        """Journal the effect started, owned by ``epoch`` -- only if the run's stored epoch is
        still ``epoch``, its lease is live at ``now`` (``lease_until > now``; ``now`` is the
        driver's :class:`Clock` reading, never the store's own clock) and the effect was never
        started (or was reconciled not applied), in one atomic conditional insert
        (``run.ownership.fencing``).  Returns whether it did: only then may the effect be
        applied.  ``now`` None: a run no driver leases (a guard's thread record), fenced by
        its epoch alone."""
        ...

    def finish(self, run_id: str, key: str, epoch: int) -> bool:
        """Journal the effect finished -- only if it is still the one ``epoch`` started."""
        ...

    def settle(self, run_id: str, key: str, status: EffectStatus) -> None:
        """Record a reconciliation of an unknown outcome."""
        ...

    def status(self, run_id: str, key: str) -> EffectStatus | None: ...

    def started_by(self, run_id: str, key: str) -> int | None:
        """The epoch that journalled the entry started, while it is ``started`` (else None):
        only a driver of a later epoch may take it for an unknown outcome."""
        ...

    def open_entries(self, run_id: str) -> Sequence[str]:
        """Keys started and not finished (nor settled) for this run."""
        ...


@runtime_checkable
class Clock(Protocol):
    """The time the deployment decides by: expiry and authority are judged at ``now()``."""

    def now(self) -> int:
        """Milliseconds."""
        ...


@attrs.frozen
class AuditEvent:
    kind: str
    interrupt_id: str
    detail: str


@runtime_checkable
class AuditSink(Protocol):
    def record(self, event: AuditEvent) -> None: ...


@runtime_checkable
class Signer(Protocol):
    """Mints and verifies tokens.  ``verify`` raises :class:`pausepoint.PausepointError` with
    ``token_malformed`` or ``token_invalid``; it never trusts the token for its algorithm."""

    def mint(self, claims: Claims) -> tuple[str, str]:
        """Return (token, key id)."""
        ...

    def verify(self, token: object) -> Claims:
        """The claims of ``token``.  A token arrives from outside as any value (a JSON number,
        a list, hostile text), and verifying it is what decides that it is a token: whatever
        it is, the only failure is the typed refusal (``token.parse.strict``)."""
        ...


@record
class RunRecord:
    """A run, its lineage and its ownership.  ``state`` is the harness's own continuation data
    (JSON text); ``epoch``, ``owner`` and ``lease_until`` are the run table's
    (:mod:`pausepoint.core.runs`)."""

    run_id: str
    root_run_id: str
    parent_run_id: str
    session_id: str
    thread_id: str
    scope: str
    status: RunStatus
    state: str = "{}"
    epoch: int = 0
    owner: str = ""
    lease_until: int = 0

    @property
    def run_state(self) -> RunState:
        return RunState(self.status, self.epoch, self.owner, self.lease_until)

    def evolve(self, new: RunState, state: str | None = None) -> RunRecord:
        """This run in the table's state ``new`` (and with continuation data ``state``)."""
        # built, not attrs.evolve'd, and by position (the fields' order, checked below): this
        # is on every run write's path
        return RunRecord(self.run_id, self.root_run_id, self.parent_run_id, self.session_id,
                         self.thread_id, self.scope, new.status,
                         self.state if state is None else state, new.epoch, new.owner,
                         new.lease_until)


assert [f.name for f in attrs.fields(RunRecord)] == [
    "run_id", "root_run_id", "parent_run_id", "session_id", "thread_id", "scope", "status",
    "state", "epoch", "owner", "lease_until"], "RunRecord.evolve passes the fields by position"


@runtime_checkable
class RunStore(Protocol):
    """Runs.  Nothing overwrites a run unconditionally: ``create`` inserts only a new run (and
    only under a live parent), ``replace`` writes only over the record it expects."""

    durable: bool

    def create(self, run: RunRecord) -> bool:
        """Insert ``run`` if no run has its id and -- when it names a parent -- the parent and
        the root run both exist and are neither cancelling nor cancelled, atomically with
        respect to a concurrent cancel of either (``run.child.cancelling-parent``).  Returns
        whether it did."""
        ...

    def get(self, run_id: str) -> RunRecord | None: ...

    def children(self, run_id: str) -> Sequence[RunRecord]: ...

    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        """Write ``new`` only if the stored run still has ``expected``'s epoch, status and
        state; return whether it did (every run write is conditional on the writer's epoch:
        ``run.ownership.fencing``)."""
        ...

    def with_status(self, status: RunStatus) -> Sequence[RunRecord]:
        """Every run in this status, oldest first (restart finds the executing runs)."""
        ...
