"""The adapter protocol: every message the suite and an implementation exchange, as pydantic
models.

The same models serve both adapters: the in-process
:class:`~pausepoint_conformance.protocol.port.Adapter` takes the ``*Args`` models and returns
the results below, and the stdio protocol sends them as
newline-delimited JSON (``{"id": n, "op": ..., "args": {...}}`` in, ``{"id": n, "result":
{...}}`` out).  The JSON Schemas in ``spec/schemas/`` are generated from these models
(:func:`schemas`) and a test keeps the committed files equal to the generated ones; the prose is
``spec/adapter-protocol.md``.

Results are one of four shapes (the ``status`` field says which):

* ``{"status": "ok", "data": {...}}`` -- the operation happened; ``data`` is the op's data model;
* ``{"status": "refused", "code": ..., "message": ..., "clause": ...}`` -- the implementation
  refused it with an error code of the contract's closed set
  (``pausepoint.core.clauses.ErrorCode``);
* ``{"status": "skipped", "reason": ...}`` -- the implementation does not support the operation;
* ``{"status": "errored", "traceback": ...}`` -- something broke (an exception, a crash, a hang,
  garbage on the wire: the suite makes this one itself when the transport fails).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from pausepoint.core import script
from pausepoint.core.clauses import Group
from pausepoint.core.script import Fault as Fault  # the protocol's faults are the script's
from pausepoint.engine.service import RunView

PROTOCOL_VERSION = 1
"""The adapter protocol's version; the ``hello`` handshake compares it."""

SCHEMA_BASE = "urn:pausepoint:schema:"  # a URN: the project owns no web domain

T = TypeVar("T")


class _In(BaseModel):
    """A message the suite sends: exactly these fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _Out(BaseModel):
    """A message an implementation sends: unknown fields are ignored (forward compatible)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


# -- scripts ---------------------------------------------------------------------------------


class EffectStep(_In):
    """A side effect: journal it started, apply it to the world (its execution count goes up
    by one), journal it finished.  ``fault`` makes the process die at that point the first
    time the step executes."""

    op: Literal["effect"] = Field(default="effect", description="a journalled side effect")
    key: str = Field(min_length=1, description="effect key, unique within the script")
    fault: Fault | None = Field(default=None, description="die at this point the first time "
                                                          "the step executes")


class Handlers(_In):
    """Ordinary user code around a pause point: the pause is asked inside ``try: ... except
    <every ordinary error>: ... finally: ...`` of the implementation's language.  Each handler
    that runs applies its key once to the world (counted by ``effect_count``, not journalled).
    A catch-all handler that catches something swallows it: the run goes on with the next
    step.  The pause signal must pass the catch-all untouched (pause.signal.base-exception)
    and run the cleanup on its way to the runner (pause.signal.single-catch)."""

    catch_all: str | None = Field(default=None, min_length=1,
                                  description="key applied when the ordinary-error handler "
                                              "catches something")
    cleanup: str | None = Field(default=None, min_length=1,
                                description="key applied when the finally clause runs")


CheckpointWrite = Literal["ok", "fail"]
"""How an interrupt step's turn-checkpoint write reports
(:attr:`InterruptStep.checkpoint_write`)."""
CheckpointBinding = Literal["turn", "none"]
"""What an interrupt step's pause is bound to (:attr:`InterruptStep.checkpoint`)."""


class InterruptStep(_In):
    """Stop to ask a person: one pause point per name (``name``, or several at once with
    ``names``), answered independently; the run continues when every one is consumed.
    ``checkpoint_write: "fail"`` makes the turn-checkpoint write of these pauses report
    failure (so they must stay ``paused``, never ``resumable``).  ``checkpoint: "none"`` asks
    the pause with no checkpoint to bind it to (the run's thread has none and none is named):
    it must be refused with ``checkpoint_missing``.  ``handlers`` wraps the pause point in user
    code (:class:`Handlers`)."""

    op: Literal["interrupt"] = Field(default="interrupt", description="stop to ask a person")
    name: str | None = Field(default=None, description="the registered interaction asked")
    names: list[str] | None = Field(default=None, description="several interactions asked at "
                                                              "once, answered independently")
    payload: JsonValue = Field(default_factory=dict, description="the payload shown to the "
                                                                 "person (fits the interaction)")
    checkpoint_write: CheckpointWrite = Field(
        default="ok", description="fail: the turn-checkpoint write reports failure")
    checkpoint: CheckpointBinding = Field(
        default="turn", description="turn: bound to the checkpoint of the turn that asks; "
                                    "none: no checkpoint to bind to (refused)")
    tool_call_id: str | None = Field(default=None, description="the tool call a tool pause "
                                     "(interaction pay) is bound to")
    handlers: Handlers | None = Field(default=None, description="user code wrapped around "
                                                                "the pause point")

    def all_names(self) -> list[str]:
        if self.names:
            return list(self.names)
        return [self.name or ""]


class EndStep(_In):
    """The run ends (done)."""

    op: Literal["end"] = Field(default="end", description="the run ends (done)")


class GateStep(_In):
    """An approval gate (``pausepoint.core.gate.ThresholdGate``): ``amount`` up to ``allow_up_to``
    is allowed -- the run goes on without pausing; over ``deny_over`` it is denied -- the run
    ends ``done`` without running the rest of its script, and without pausing; in between the
    gate asks a person: an ``approve`` pause (payload ``{"amount", "reason"}``), answered like
    an interrupt's, after which the run goes on with the next step (gate.separate).  The
    reference model has no gates: scenario vectors never contain this step."""

    op: Literal["gate"] = "gate"
    amount: float = Field(allow_inf_nan=False)
    allow_up_to: float = Field(allow_inf_nan=False)
    deny_over: float = Field(allow_inf_nan=False)


Step = Annotated[EffectStep | InterruptStep | GateStep | EndStep, Field(discriminator="op")]
"""A step of a scripted run."""

ModelledStep = Annotated[EffectStep | InterruptStep | EndStep, Field(discriminator="op")]
"""The steps the reference model (``pausepoint.system.model``) knows: the script steps of scenario
vectors."""

_STEP: TypeAdapter[Step] = TypeAdapter(Step)


def to_script(step: Step) -> script.Step:
    """A protocol step in the one script form, :mod:`pausepoint.core.script`: the models above
    describe its JSON form (a test holds the two equal)."""
    return script.from_json(step.model_dump(mode="json"))


def from_script(step: script.Step) -> Step:
    """The inverse of :func:`to_script`."""
    return _STEP.validate_python(script.to_json(step))


# -- operation arguments (suite -> implementation) -------------------------------------------


class HelloArgs(_In):
    protocol: int = Field(description="the protocol version the suite speaks")
    suite: str = Field(description="the suite's name and version, for the implementation's logs")


class ResetArgs(_In):
    """Forget everything: a fresh, empty instance with its clock at 0 and new keys.  Every
    check and every vector starts with a reset."""

    ttl_ms: int = Field(gt=0, description="lifetime of every pause, in clock milliseconds")


class StartArgs(_In):
    """Start a scripted run and execute it until it pauses, ends, is cancelled or crashes."""

    run_id: str
    parent_run_id: str | None = None
    session_id: str
    scope: str
    script: list[Step]


class ResumeArgs(_In):
    """Answer a pause with ``response``, presenting ``token`` (as published) from a request
    made by ``responder`` for ``run_id`` in ``session_id`` and ``scope``."""

    token: str
    response: JsonValue
    run_id: str
    session_id: str
    scope: str
    responder: str = "person"


class CancelArgs(_In):
    run_id: str


class AdvanceClockArgs(_In):
    """Move the implementation's clock forward (and let it decide anything that became due,
    such as expiry)."""

    ms: int = Field(ge=0)


class CrashRestartArgs(_In):
    """The process dies (everything volatile is lost) and starts again from durable state."""


class Resolution(enum.StrEnum):
    # How an unknown outcome is settled over the protocol: the reference's
    # pausepoint.core.lifecycle.Resolution but ``compensated`` (tests/test_representations.py
    # holds them equal).  A comment, not a docstring: the docstring would enter the schemas.
    APPLIED = "applied"
    NOT_APPLIED = "not_applied"


class ReconcileArgs(_In):
    """Settle the unknown outcome behind a recovery pause: the effect was or was not applied."""

    interrupt_id: str
    resolution: Resolution


class PauseStateArgs(_In):
    interrupt_id: str


class EffectCountArgs(_In):
    run_id: str
    key: str


class RaceResumeArgs(_In):
    """Run these resumes concurrently (as separate resume servers would) and report each
    result, in the order given."""

    requests: list[ResumeArgs] = Field(min_length=2)


class StatusArgs(_In):
    """Optional operation: what a person would be told about the run (status.distinguishes)."""

    run_id: str


class RotateKeyArgs(_In):
    """Optional operation: add a new signing key and make it the one that signs; older keys
    keep verifying (token.rotation.drain)."""


class RetireKeyArgs(_In):
    """Optional operation: remove key ``kid`` from the ring -- only once no outstanding pause
    carries a token it signed (the drain proof is 0); otherwise refused ``key_not_drained``
    (also for the signing key), and ``key_unknown`` for a key id not in the ring."""

    kid: str


class ByeArgs(_In):
    """The suite is done; answer, then exit."""


# -- results ---------------------------------------------------------------------------------


class Ok(_Out, Generic[T]):
    status: Literal["ok"] = "ok"
    data: T


class Refused(_Out):
    status: Literal["refused"] = "refused"
    code: str = Field(description="an error code of the contract's closed set")
    message: str = ""
    clause: str | None = Field(default=None, description="the clause id the refusal cites")


class Skipped(_Out):
    status: Literal["skipped"] = "skipped"
    reason: str


class Errored(_Out):
    status: Literal["errored"] = "errored"
    traceback: str


# Union, not ``|``: the alias is generic, and ``Ok[T] | Refused | ...`` cannot be subscripted
# (``Result[HelloData]``) at run time.
Result = Union[Ok[T], Refused, Skipped, Errored]  # noqa: UP007
"""What every operation returns."""


# -- operation data (implementation -> suite) ------------------------------------------------


class Implementation(_Out):
    name: str
    version: str
    language: str = ""
    homepage: str = ""


class HelloData(_Out):
    implementation: Implementation
    protocol: int
    groups: list[Group] = Field(description="the clause groups claimed; core is always claimed")
    notes: str = ""


class Empty(_Out):
    pass


class PauseKind(enum.StrEnum):
    ASK = "ask"
    RECOVERY = "recovery"


class PublishedPause(_Out):
    """A pause as the implementation publishes it."""

    interrupt_id: str
    run_id: str
    name: str
    kind: PauseKind = Field(description="ask: a scripted question; recovery: opened after a "
                                        "crash for an effect whose outcome is unknown")
    payload: JsonValue = None
    token: str
    resumable: bool
    expires_at: int
    tool_call_id: str = ""


class RunStatus(enum.StrEnum):
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    ERROR = "error"
    RUNNING = "running"


class RunReport(_Out):
    """Where a run stands after an operation: its status, the events of the invocation that
    just ran (event kinds, in order), and its live pauses as published.  ``refusal`` is set
    when the invocation stopped because the implementation refused to take one of its pauses
    (the run stays running, nothing is published)."""

    run_id: str
    status: RunStatus
    events: list[str] = Field(default_factory=list)
    pauses: list[PublishedPause] = Field(default_factory=list)
    refusal: Refused | None = None


class ResumeData(_Out):
    """An accepted resume: ``replayed`` is true when it returned the first result of an
    already consumed pause without running anything."""

    replayed: bool
    interrupt_id: str = ""
    run: RunReport


class CancelData(_Out):
    run: RunReport


class ClockData(_Out):
    now: int


class RestartData(_Out):
    """After a restart: every run that was recovered (continued or opened a recovery pause),
    and every live pause of every run, published again."""

    runs: list[RunReport] = Field(default_factory=list)
    pauses: list[PublishedPause] = Field(default_factory=list)


class PhaseData(_Out):
    phase: str = Field(description="running, paused, resumable, unknown_outcome, consumed, "
                                   "expired or cancelled")


class CountData(_Out):
    count: int


ResumeResult = Annotated[Ok[ResumeData] | Refused | Skipped | Errored,
                         Field(discriminator="status")]


class RaceData(_Out):
    results: list[ResumeResult]


RUN_VIEWS: tuple[str, ...] = tuple(v.value for v in RunView)
"""The answers of the ``status`` operation (``spec/contract.md``, status.distinguishes): the
reference's :class:`~pausepoint.engine.service.RunView`."""


class StatusData(_Out):
    """The run's status as a person would be told it.  A plain string on the wire, so that an
    answer outside :data:`RUN_VIEWS` (``"paused"``, say) fails the check instead of being a
    transport error."""

    view: str = Field(description="running, safely_suspended (paused, every live pause "
                                  "resumable), partially_complete (paused, some live pause not "
                                  "resumable), cancelling, waiting_unknown_outcome, done, "
                                  "cancelled or ended")


class KeyData(_Out):
    kid: str = Field(description="the key id of the new signing key")


Durability = Literal["durable", "volatile"]
"""A trial wiring's part: one that survives a restart, or one in memory."""
TokenCodec = Literal["none", "both", "encoder_only", "decoder_only"]
"""A trial wiring's token encoder/decoder pair: none, both, or only one half."""


class WiringArgs(_In):
    """Optional operation: wire a *trial* deployment from these parts, say what it offers the
    model, and discard it (wiring.consistent, wiring.no-interaction-no-tool).  The instance
    under test is not touched.  ``durable`` parts survive a restart; ``volatile`` ones live in
    memory.  ``token_codec`` is a token encoder/decoder pair around the signed token: none,
    both, or only one half.  ``interactions`` are names from the protocol's interaction table
    to register (none at all is allowed)."""

    checkpoints: Durability
    ledger: Durability
    token_codec: TokenCodec = "none"
    interactions: list[str] = Field(default_factory=list)


class OfferedTool(_Out):
    name: str
    asks_user: bool = Field(description="true for a tool that stops the run to ask a person")


class WiringData(_Out):
    """The tools the trial deployment offers the model."""

    tools: list[OfferedTool] = Field(default_factory=list)


class Interleaving(enum.StrEnum):
    """A run-level situation of several servers on one store (optional ``interleave``
    operation).  Each is played on a *fresh, separate* store of the implementation's kind, by
    servers A and B (and a restarter) of the implementation, each with its own connections and
    name; the steps named here happen in this order, forced (not left to timing).  The effects
    counted are those of the scenario's main run ``r1`` (``c`` for the child scenario).

    ``stale_continuation``: script ask, approve, effect pay, end.  A consumes the ask's answer
    and stops just before continuing; B restarts and finds the run stalled, reading the answer;
    A continues to the approval question; then B continues.  ``restart_beside_live``: script
    effect a, effect b, end; A stops just before effect b; B restarts; A goes on.
    ``lease_taken_over``: script effect a, b, c, end; A stops before effect b, its lease runs
    out; B restarts (taking the run over and finishing it); A goes on.  ``concurrent_restarts``:
    the process running effect a, effect b, end dies before b; its lease runs out; restarter A
    stops before b; restarter B restarts; A goes on.  ``cancel_in_flight``: script effect a,
    effect pay, end; while A applies a, B cancels the run.  ``cancel_finished``: script effect
    a, end; B's cancel reads the run running, then A finishes it, then B's cancel goes on
    (``refusal``: what B's cancel got).  ``child_under_cancel``: parent p paused at a question;
    B's start of child c (effect pay, end) reads the parent, then A cancels p, then B's start
    goes on (``refusal``: what the start got).  ``kill_opening_recovery``: effect e (crash after
    apply), end; the process dies after applying e; a restart dies right after issuing the
    recovery pause; another restart runs.  ``store_blink``: ask, confirm, effect pay, end; the
    ask is answered and the store fails once as the continuation takes the confirm pause; then a
    restart runs.  ``stale_recovery``: script effect a, end; A stops just before it reads
    effect a's journal entry, its lease runs out; B restarts (taking the run over) and applies a,
    held in flight; then A goes on (it sees a started by B's later epoch), then B finishes.
    ``cancel_opening_recovery``: effect e (crash before apply), end; the process dies inside e;
    its lease runs out; a restart by A stops just before issuing the recovery pause; B cancels
    the run (``refusal``: what the cancel got); A goes on."""

    STALE_CONTINUATION = "stale_continuation"
    RESTART_BESIDE_LIVE = "restart_beside_live"
    LEASE_TAKEN_OVER = "lease_taken_over"
    CONCURRENT_RESTARTS = "concurrent_restarts"
    CANCEL_IN_FLIGHT = "cancel_in_flight"
    CANCEL_FINISHED = "cancel_finished"
    CHILD_UNDER_CANCEL = "child_under_cancel"
    KILL_OPENING_RECOVERY = "kill_opening_recovery"
    STORE_BLINK = "store_blink"
    STALE_RECOVERY = "stale_recovery"
    CANCEL_OPENING_RECOVERY = "cancel_opening_recovery"


class InterleaveArgs(_In):
    """Optional operation: play one run-level interleaving on a fresh, separate store and
    report what it left (the run-level clauses ``run.*``).  The instance under test is not
    touched."""

    scenario: Interleaving


class InterleaveData(_Out):
    """What the interleaving left, read from the store and the world once every server is
    done."""

    effects: dict[str, int] = Field(default_factory=dict,
                                    description="effect key -> times applied to the world")
    status: str = Field(description="the main run's status (unknown if it does not exist)")
    live_pauses: list[str] = Field(default_factory=list,
                                   description="interaction names of the main run's live "
                                               "pauses, in the order they were taken")
    recoveries: int = Field(0, description="recovery pauses ever opened for the main run")
    refusal: str | None = Field(None, description="the error code the racing operation was "
                                                  "refused with, if it was")
    taken_over: bool = Field(False, description="a restart took over a run another server "
                                                "was driving")


# -- the operations --------------------------------------------------------------------------


class Op(enum.StrEnum):
    HELLO = "hello"
    RESET = "reset"
    START = "start"
    RESUME = "resume"
    CANCEL = "cancel"
    ADVANCE_CLOCK = "advance_clock"
    CRASH_RESTART = "crash_restart"
    RECONCILE = "reconcile"
    PAUSE_STATE = "pause_state"
    EFFECT_COUNT = "effect_count"
    RACE_RESUME = "race_resume"
    STATUS = "status"
    ROTATE_KEY = "rotate_key"
    RETIRE_KEY = "retire_key"
    WIRING = "wiring"
    INTERLEAVE = "interleave"
    BYE = "bye"


OPS: dict[Op, tuple[type[_In], type[_Out]]] = {
    Op.HELLO: (HelloArgs, HelloData),
    Op.RESET: (ResetArgs, Empty),
    Op.START: (StartArgs, RunReport),
    Op.RESUME: (ResumeArgs, ResumeData),
    Op.CANCEL: (CancelArgs, CancelData),
    Op.ADVANCE_CLOCK: (AdvanceClockArgs, ClockData),
    Op.CRASH_RESTART: (CrashRestartArgs, RestartData),
    Op.RECONCILE: (ReconcileArgs, PhaseData),
    Op.PAUSE_STATE: (PauseStateArgs, PhaseData),
    Op.EFFECT_COUNT: (EffectCountArgs, CountData),
    Op.RACE_RESUME: (RaceResumeArgs, RaceData),
    Op.STATUS: (StatusArgs, StatusData),
    Op.ROTATE_KEY: (RotateKeyArgs, KeyData),
    Op.RETIRE_KEY: (RetireKeyArgs, Empty),
    Op.WIRING: (WiringArgs, WiringData),
    Op.INTERLEAVE: (InterleaveArgs, InterleaveData),
    Op.BYE: (ByeArgs, Empty),
}
"""Each operation's argument model and the data model of its ``ok`` result."""

OPTIONAL_OPS: frozenset[Op] = frozenset({Op.STATUS, Op.ROTATE_KEY, Op.RETIRE_KEY,
                                          Op.WIRING, Op.INTERLEAVE})
"""Operations an implementation may leave out: it answers them ``skipped`` (an in-process
adapter may simply lack the method), and the checks that need them are reported skipped --
never passed."""


def _request_model(op: Op, args: type[_In]) -> type[_In]:
    from pydantic import create_model

    fields: dict[str, Any] = {
        "id": (int, Field(description="echoed in the response")),
        "op": (Literal[op.value], ...),
        "args": (args, ...),
    }
    model: type[_In] = create_model(
        f"{''.join(p.title() for p in op.value.split('_'))}Request", __base__=_In, **fields)
    return model


REQUEST_MODELS: dict[Op, type[_In]] = {op: _request_model(op, a) for op, (a, _) in OPS.items()}


def response_model(op: Op) -> type[BaseModel]:
    from pydantic import create_model

    data = OPS[op][1]
    fields: dict[str, Any] = {
        "id": (int, ...),
        "result": (Annotated[Ok[data] | Refused | Skipped | Errored,  # type: ignore[valid-type]
                             Field(discriminator="status")], ...),
    }
    name = f"{''.join(p.title() for p in op.value.split('_'))}Response"
    model: type[BaseModel] = create_model(name, __base__=_Out, **fields)
    return model


RESPONSE_MODELS: dict[Op, type[BaseModel]] = {op: response_model(op) for op in OPS}
