"""What every peer adapter shares: turning the framework's calls into protocol results, the
handshake, the constants of its pauses, how a resume is resolved and answered
(:func:`resume_in_two_steps`), where saved states are kept (:class:`SavedStates`), and
:class:`PeerAdapter` -- the operations every adapter carries out the same way, whatever its
framework.

A peer adapter realises the protocol with its framework's own primitives only; these helpers
keep the bookkeeping around them in one place.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import Any, ClassVar, Final, Literal, TypeVar

import attrs

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.engine.harness import MemoryWorld
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.adapters.reference import INTERACTIONS
from pausepoint_conformance.protocol.port import errored_from, run_together
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    AdvanceClockArgs,
    CancelArgs,
    CancelData,
    ClockData,
    CountData,
    EffectCountArgs,
    EffectStep,
    EndStep,
    Errored,
    GateStep,
    HelloData,
    Implementation,
    InterruptStep,
    Ok,
    PhaseData,
    RaceData,
    RaceResumeArgs,
    ReconcileArgs,
    Refused,
    Result,
    ResumeArgs,
    ResumeData,
    ResumeResult,
    Skipped,
    Step,
)

T = TypeVar("T")
R = TypeVar("R")

NO_EXPIRY: Final[int] = 2**53 - 1
"""``expires_at`` of every pause a peer publishes: no peer's framework gives a pause a deadline
(or keeps one across a save), and the protocol wants an integer -- this is the largest one JSON
carries exactly."""

TOKEN_SEPARATOR: Final[str] = ":"
"""What joins the two halves of a peer's token, ``"<run id>:<the framework's id of the
pause>"`` -- what an integration puts behind a button: which saved run to load, which of its
pauses to answer."""


@attrs.frozen
class Framework:
    """What a framework documents, as the scoring rule (:func:`claims`, :func:`unrealisable`;
    ``docs/peers.md``) reads it -- the only input the rule takes from a peer.

    ``documents``: the optional groups whose feature the framework's own docs describe;
    ``persistence``: who writes the state a paused run is saved in -- the framework (a
    checkpointer it calls itself) or the application (it hands the state over and the
    application's code saves it); ``tool_call_ids``: the framework always makes up the id of a
    tool call itself, so a tool pause without one cannot occur; ``user_code_at_pause``: user
    code can sit around the pause point (the pause is raised inside a function the user
    writes)."""

    name: str
    documents: frozenset[Group]
    persistence: Literal["framework", "application"]
    tool_call_ids: bool = False
    user_code_at_pause: bool = True
    always_checkpoints: bool = False


def claims(framework: Framework, *, durable: bool) -> list[Group]:
    """The groups a peer claims: core; each group whose feature the framework documents; and
    durability when the measured variant keeps its saved states in a file (``durable``) --
    in the order of :class:`Group`."""
    wanted = {Group.CORE, *framework.documents, *([Group.DURABILITY] if durable else [])}
    return [g for g in Group if g in wanted]


def unrealisable(framework: Framework, step: Step, tool_names: frozenset[str]) -> str | None:
    """Why a script step is skipped for the framework -- it makes the step impossible -- or
    ``None`` when the adapter must realise it.  ``tool_names``: the interactions that are tool
    calls.  The one rule for every peer (``docs/peers.md``, "The scoring rule")."""
    who = framework.name
    if isinstance(step, EffectStep) and step.fault is not None:
        return (f"effect fault {step.fault.value}: {who} has no effect journal to crash inside "
                "of; an effect a crash interrupts is simply lost or run again")
    if not isinstance(step, InterruptStep):
        return None
    if framework.persistence == "application" and (
            step.checkpoint != "turn" or step.checkpoint_write != "ok"):
        return (f"{who} writes no checkpoint of its own: it hands the paused run's state to "
                "the application, and saving it (or not) is the application's code")
    if framework.always_checkpoints and step.checkpoint == "none":
        return (f"{who} gives every run a checkpointer: a pause without a checkpoint cannot "
                "occur")
    if framework.tool_call_ids and step.tool_call_id is None and any(
            n in tool_names for n in step.all_names()):
        return (f"{who} always makes up the id of a tool call itself: a tool pause without "
                "one cannot occur")
    if not framework.user_code_at_pause and step.handlers is not None:
        return (f"{who} asks in its runner before the tool function runs: no user code sits "
                "around the pause point")
    return None


@attrs.frozen
class ToolCall:
    """A tool call a scripted model makes: the tool, its arguments (JSON text) and its call
    id -- ``None``: the model makes one up; ``""``: the call has none."""

    tool: str
    arguments: str
    call_id: str | None = None


@attrs.frozen
class ModelScript:
    """A script as a tool-calling model plays it: one turn of tool calls per step until the
    end -- an effect a call of the tool ``effect``; a gate a call of the tool ``gate_<i>``
    (in :attr:`gates`); a question a call of the tool named like the interaction, with the
    payload as its arguments, several at once parallel calls -- and the interaction each tool
    asks (:attr:`questions`: a gate asks :data:`GATE_QUESTION`)."""

    turns: tuple[tuple[ToolCall, ...], ...]
    gates: tuple[tuple[str, GateStep], ...]
    questions: dict[str, str]

    def turn(self, calls_made: int) -> int | None:
        """The turn a model plays once the conversation holds ``calls_made`` tool calls (so it
        answers any saved state from the history alone), or ``None`` after the last."""
        k = 0
        while k < len(self.turns) and calls_made >= len(self.turns[k]):
            calls_made -= len(self.turns[k])
            k += 1
        return k if k < len(self.turns) else None


GATE_QUESTION: Final[str] = "approve"
"""The interaction a gate asks when it needs a person."""

DENIED: Final[str] = "denied"
"""How a gate tool's output starts when the gate denies: the model ends the run on it."""


def model_script(script: Sequence[Step]) -> ModelScript:
    """The model's turns for ``script``: a tool pause (a tool interaction) without the script's
    tool call id is a call with none; any other call without one gets one made up."""
    turns: list[tuple[ToolCall, ...]] = []
    gates: list[tuple[str, GateStep]] = []
    questions = {i.name: i.name for i in INTERACTIONS}
    tools = {i.name: i for i in INTERACTIONS}
    for i, step in enumerate(script):
        if isinstance(step, EndStep):
            break
        if isinstance(step, EffectStep):
            turns.append((ToolCall("effect", json.dumps({"key": step.key})),))
        elif isinstance(step, GateStep):
            name = f"gate_{i}"
            gates.append((name, step))
            questions[name] = GATE_QUESTION
            turns.append((ToolCall(name, json.dumps({"amount": step.amount})),))
        else:
            assert isinstance(step, InterruptStep)
            args = json.dumps(step.payload)
            turns.append(tuple(
                ToolCall(name, args, step.tool_call_id if step.tool_call_id is not None
                         else "" if name in tools and tools[name].tool else None)
                for name in step.all_names()))
    return ModelScript(turns=tuple(turns), gates=tuple(gates), questions=questions)


def approval(response: Any) -> bool | Refused:
    """A person's decision on an approval: the response must be ``{"approved": bool}`` (the
    framework's answer is approve or reject, nothing else); any other answer is refused
    ``response_invalid``."""
    if isinstance(response, dict) and isinstance(response.get("approved"), bool):
        return bool(response["approved"])
    return Refused(code=ErrorCode.RESPONSE_INVALID.value,
                   message=f"an approval is {{approved: bool}}, not {response!r:.60}",
                   clause="resume.response.schema")


def no_refusal(exc: Exception) -> Refused | None:
    """The framework refuses nothing: every exception it raises is an error."""
    return None


def attempt(fn: Callable[[], T],
            refusal: Callable[[Exception], Refused | None] = no_refusal) -> T | Refused | Errored:
    """``fn()``; or, when it raises, the refusal ``refusal`` makes of the exception (the
    framework's own rejections, mapped to codes of the contract's closed set), else the
    error."""
    try:
        return fn()
    except Exception as exc:
        refused = refusal(exc)
        return refused if refused is not None else errored_from(exc)


def as_result(value: T | Refused | Errored) -> Result[T]:
    """An :func:`attempt`'s outcome as a protocol result."""
    if isinstance(value, (Refused, Errored)):
        return value
    return Ok(data=value)


def resume_in_two_steps(resolve: Callable[[], R | Refused],
                        answer: Callable[[R], ResumeData | Refused],
                        together: Callable[[], None] | None, *,
                        resolve_refusal: Callable[[Exception], Refused | None] = no_refusal,
                        answer_refusal: Callable[[Exception], Refused | None] = no_refusal,
                        ) -> ResumeResult:
    """A peer's resume: ``resolve`` the pause the token names against the saved state (or
    refuse it), then -- once ``together`` has let every racer read the state too -- ``answer``
    it.  Each step's exceptions become the refusals its ``*_refusal`` makes of them, else
    errors."""
    resolved = attempt(resolve, resolve_refusal)
    if together is not None:  # every racer has read the state: now all answer together
        together()
    if isinstance(resolved, (Refused, Errored)):
        return resolved
    return as_result(attempt(lambda: answer(resolved), answer_refusal))


class SavedStates:
    """Where an integration keeps each run's latest saved state (text): in memory (``path``
    ``None``), or in a table of the SQLite file ``path``, committed at every write.  Safe to
    share between threads."""

    def __init__(self, path: str | None) -> None:
        self._lock = threading.Lock()
        self._memory: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._db = sqlite3.connect(path, check_same_thread=False)
            with self._lock, self._db:
                self._db.execute("CREATE TABLE IF NOT EXISTS states "
                                 "(run_id TEXT PRIMARY KEY, state TEXT NOT NULL)")

    def get(self, run_id: str) -> str | None:
        with self._lock:
            if self._db is None:
                return self._memory.get(run_id)
            row = self._db.execute("SELECT state FROM states WHERE run_id = ?",
                                   (run_id,)).fetchone()
        return str(row[0]) if row else None

    def put(self, run_id: str, state: str) -> None:
        with self._lock:
            if self._db is None:
                self._memory[run_id] = state
                return
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO states VALUES (?, ?)", (run_id, state))

    def clear(self) -> None:
        with self._lock:
            self._memory.clear()
            if self._db is not None:
                with self._db:
                    self._db.execute("DELETE FROM states")

    def close(self) -> None:
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


def hello(*, name: str, distribution: str, homepage: str, groups: Sequence[Group],
          notes: str) -> Ok[HelloData]:
    """The handshake of a peer: the framework's installed version, the groups it claims."""
    return Ok(data=HelloData(
        implementation=Implementation(name=name, version=version(distribution),
                                      language="python", homepage=homepage),
        protocol=PROTOCOL_VERSION, groups=list(groups),
        notes=f"{notes}; suite {suite_version}"))


def serve_on_loopback(app: object, name: str) -> tuple[str, Callable[[], None]]:
    """Serve the ASGI application ``app`` (or its ``"module:attribute"``) with uvicorn on
    ``127.0.0.1``, a free port, in a daemon thread called ``name``, as a framework's server is
    deployed: its base URL, and how to stop it."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,  # type: ignore[arg-type]
                                           log_level="error"))
    runner = threading.Thread(target=server.run, name=name, daemon=True)
    runner.start()
    while not server.started:
        if not runner.is_alive():
            raise RuntimeError(f"{name} did not start (its log says why)")
        runner.join(0.02)

    def stop() -> None:
        server.should_exit = True
        runner.join()
    return f"http://127.0.0.1:{port}", stop


class PeerAdapter(ABC):
    """What every peer adapter does the same way: the world its runs' effects are applied to
    (in memory) and ``effect_count``; ``resume`` and ``race_resume`` on the adapter's own
    :meth:`_resume`; and ``cancel``, ``advance_clock`` and ``reconcile`` answered skipped --
    no peer's framework has the mechanism -- with the framework's reasons, which a subclass
    sets in :attr:`cancel_reason`, :attr:`clock_reason` and :attr:`reconcile_reason`."""

    framework: ClassVar[Framework]
    """What the framework documents: the scoring rule's only input (:func:`claims`,
    :func:`unrealisable`)."""

    cancel_reason: ClassVar[str]
    """Why ``cancel`` is skipped: how the framework leaves a paused run."""

    clock_reason: ClassVar[str]
    """Why ``advance_clock`` is skipped: the framework's pauses have no deadline."""

    reconcile_reason: ClassVar[str]
    """Why ``reconcile`` is skipped: the framework has no effect journal."""

    def __init__(self) -> None:
        self._world = MemoryWorld()

    def close(self) -> None:  # noqa: B027 -- a default: only peers holding files override it
        """Nothing to release."""

    @abstractmethod
    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        """Answer the pause the token names, as the framework's user would.  ``fresh``: with
        framework objects of its own, as on another server; ``together`` is called once the
        resume has read the saved state (racers wait there for each other)."""

    def _durable(self) -> bool:
        """Whether the measured variant keeps its saved states in a file."""
        return False

    def claimed(self) -> list[Group]:
        """The groups the handshake claims: the scoring rule's (:func:`claims`)."""
        return claims(self.framework, durable=self._durable())

    def skipped(self, script: Sequence[Step]) -> Skipped | None:
        """``start``'s answer to a script with a step the framework makes impossible (the
        scoring rule's :func:`unrealisable`, up to the script's end), else ``None``."""
        tools = frozenset(i.name for i in INTERACTIONS if i.tool)
        for step in script:
            if isinstance(step, EndStep):
                break
            reason = unrealisable(self.framework, step, tools)
            if reason is not None:
                return Skipped(reason=reason)
        return None

    def resume(self, args: ResumeArgs) -> Result[ResumeData]:
        return self._resume(args)

    def race_resume(self, args: RaceResumeArgs) -> Result[RaceData]:
        """Each request goes to a server of its own (a ``fresh`` :meth:`_resume`): each reads
        the saved state, then all answer together."""
        def server(req: ResumeArgs) -> Callable[[Callable[[], None]], ResumeResult]:
            return lambda together: self._resume(req, fresh=True, together=together)
        results: list[ResumeResult] = run_together([server(r) for r in args.requests])
        return Ok(data=RaceData(results=results))

    def cancel(self, args: CancelArgs) -> Result[CancelData]:
        return Skipped(reason=self.cancel_reason)

    def advance_clock(self, args: AdvanceClockArgs) -> Result[ClockData]:
        return Skipped(reason=self.clock_reason)

    def reconcile(self, args: ReconcileArgs) -> Result[PhaseData]:
        return Skipped(reason=self.reconcile_reason)

    def effect_count(self, args: EffectCountArgs) -> Result[CountData]:
        return Ok(data=CountData(count=self._world.count(args.run_id, args.key)))


class StoredPeerAdapter(PeerAdapter):
    """A peer adapter whose saved state lives in memory (``store="memory"``) or in a SQLite
    file (``"sqlite"``, which claims durability) in the adapter's private temporary directory:
    made under ``scratch`` or the system's temporary directory (its name starting with
    :attr:`scratch_prefix`) whatever the store, and removed by :meth:`close` once
    :meth:`_close_store` has closed the adapter's store."""

    scratch_prefix: ClassVar[str]
    """How the name of the adapter's temporary directory starts."""

    def __init__(self, store: str = "memory", *, scratch: str | None = None) -> None:
        if store not in ("memory", "sqlite"):
            raise ValueError(f"store must be memory or sqlite, not {store!r}")
        super().__init__()
        self.store = store
        self._dir = tempfile.mkdtemp(prefix=self.scratch_prefix, dir=scratch)

    def _close_store(self) -> None:
        """Close the adapter's own store (its directory is removed next)."""

    def close(self) -> None:
        self._close_store()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _saved_states(self, file_name: str) -> SavedStates:
        """A new handle on the adapter's saved states: in memory (an empty store: nothing in
        memory survives a restart), or in the SQLite file ``file_name`` of its directory."""
        return SavedStates(os.path.join(self._dir, file_name) if self.store == "sqlite"
                           else None)

    def _durable(self) -> bool:
        return self.store == "sqlite"
