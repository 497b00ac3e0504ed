"""A scripted run, in one form: the steps a run executes, as typed, immutable values.

This is the one representation of a script; every other is converted from it here, once:

* its **JSON form** (:func:`to_json`, :func:`from_json`) -- ``{"op": "effect", "key": k}``,
  ``{"op": "interrupt", "name": n, "payload": p, ...}`` (``"names"`` for several questions at
  once), ``{"op": "gate", ...}``, ``{"op": "end"}`` -- what the adapter protocol sends
  (``pausepoint_conformance.protocol.wire`` describes the same JSON as pydantic models, and a
  test holds the two equal), what scenario vectors hold, and what the harness
  (:mod:`pausepoint.engine.harness`) keeps in a run's state;
* the **steps the system model knows** (:func:`modelled`): :class:`Effect`, :class:`Ask` and
  :class:`End` -- :mod:`pausepoint.system.model` runs these very values;
* their **TLA+ records** (:func:`to_tla_record`, :func:`from_tla_record`) -- ``{"kind":
  "effect", "key": k}``, ``{"kind": "ask", "names": [...]}``, ``{"kind": "end"}`` -- the
  ``Scripts`` constant of ``tla/Pausepoint.tla``, as trace headers and the model-checking
  manifest write it and as the model checker renders it in TLA+ syntax.

Pure: no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Literal

import attrs


class Fault(enum.StrEnum):
    """A scripted crash inside an effect, fired the first time the step executes."""

    CRASH_BEFORE_APPLY = "crash_before_apply"
    CRASH_AFTER_APPLY = "crash_after_apply"


@attrs.frozen
class Effect:
    """A side effect: journalled started, applied to the world, journalled finished.
    ``fault`` makes the process die at that point the first time the step executes."""

    key: str
    fault: Fault | None = None


@attrs.frozen
class Handlers:
    """User code around a pause point: the key a catch-all handler applies when it catches
    something, and the key a ``finally`` clause applies."""

    catch_all: str | None = None
    cleanup: str | None = None


@attrs.frozen
class Ask:
    """Stop to ask: one pause point per name, answered independently; the run continues when
    every one of them is consumed.  ``checkpoint_write="fail"``: the turn-checkpoint write of
    these pauses fails; ``checkpoint="none"``: they are asked with no checkpoint to bind to;
    ``tool_call_id``: the tool call they are bound to; ``handlers``: user code around them."""

    names: tuple[str, ...]
    payload: Any = attrs.field(factory=dict, hash=False)  # JSON
    checkpoint_write: Literal["ok", "fail"] = "ok"
    checkpoint: Literal["turn", "none"] = "turn"
    tool_call_id: str | None = None
    handlers: Handlers | None = None


@attrs.frozen
class Gate:
    """An approval gate (:class:`pausepoint.core.gate.ThresholdGate`): allowed, the run goes on;
    denied, the run ends done; otherwise it asks a person with an ``approve`` pause."""

    amount: float
    allow_up_to: float
    deny_over: float


@attrs.frozen
class End:
    """The run ends (done)."""


Step = Effect | Ask | Gate | End
"""A step of a scripted run."""

ModelledStep = Effect | Ask | End
"""The steps the system model knows (:func:`modelled`)."""


# -- the JSON form -----------------------------------------------------------------------------


def to_json(step: Step) -> dict[str, Any]:
    """The step's JSON form (keys in the protocol's order, absent values left out)."""
    if isinstance(step, Effect):
        out: dict[str, Any] = {"op": "effect", "key": step.key}
        if step.fault is not None:
            out["fault"] = step.fault.value
        return out
    if isinstance(step, Ask):
        ask: dict[str, Any] = {"op": "interrupt"}
        if len(step.names) == 1:
            ask["name"] = step.names[0]
        else:
            ask["names"] = list(step.names)
        ask.update(payload=step.payload, checkpoint_write=step.checkpoint_write,
                   checkpoint=step.checkpoint)
        if step.tool_call_id is not None:
            ask["tool_call_id"] = step.tool_call_id
        if step.handlers is not None:
            ask["handlers"] = {k: v for k, v in attrs.asdict(step.handlers).items()
                               if v is not None}
        return ask
    if isinstance(step, Gate):
        return {"op": "gate", "amount": step.amount, "allow_up_to": step.allow_up_to,
                "deny_over": step.deny_over}
    return {"op": "end"}


def from_json(raw: Mapping[str, Any]) -> Step:
    """The step a JSON form describes; an unknown ``op`` is a ``ValueError``."""
    op = raw.get("op")
    if op == "effect":
        fault = raw.get("fault")
        return Effect(str(raw["key"]), Fault(fault) if fault is not None else None)
    if op == "interrupt":
        handlers = raw.get("handlers")
        return Ask(names=tuple(raw.get("names") or [raw.get("name") or ""]),
                   payload=raw.get("payload", {}),
                   checkpoint_write=raw.get("checkpoint_write", "ok"),
                   checkpoint=raw.get("checkpoint", "turn"),
                   tool_call_id=raw.get("tool_call_id"),
                   handlers=Handlers(**handlers) if handlers is not None else None)
    if op == "gate":
        return Gate(float(raw["amount"]), float(raw["allow_up_to"]), float(raw["deny_over"]))
    if op == "end":
        return End()
    raise ValueError(f"unknown script step {dict(raw)!r}")


# -- the system model's steps and their TLA+ records -------------------------------------------


def modelled(step: Step) -> ModelledStep:
    """``step`` if the system model knows it; a ``ValueError`` for what it does not model: a
    gate, a pause bound to no checkpoint, user handlers around a pause point (scenario vectors
    never contain them; the conformance checks cover them)."""
    if isinstance(step, Gate):
        raise ValueError("the reference model has no gates")
    if isinstance(step, Ask) and (step.checkpoint != "turn" or step.handlers is not None):
        raise ValueError("the reference model does not model a pause bound to no "
                         "checkpoint or user handlers around a pause point; scenario "
                         "vectors never contain them (the checks cover them)")
    return step


def to_tla_record(step: ModelledStep) -> dict[str, Any]:
    """The step as a record of the TLA+ spec's ``Scripts`` (what the model checks of it)."""
    if isinstance(step, Effect):
        return {"kind": "effect", "key": step.key}
    if isinstance(step, Ask):
        return {"kind": "ask", "names": list(step.names)}
    return {"kind": "end"}


def from_tla_record(raw: Mapping[str, Any]) -> ModelledStep:
    """The inverse of :func:`to_tla_record`; an unknown kind is a ``ValueError``."""
    kind = raw.get("kind")
    if kind == "effect":
        return Effect(str(raw["key"]))
    if kind == "ask":
        return Ask(tuple(raw["names"]))
    if kind == "end":
        return End()
    raise ValueError(f"unknown script step {dict(raw)!r}")
