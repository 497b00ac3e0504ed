"""Guards -- for users of an agent framework: pausepoint in front of the framework's resume path.

A guard keeps the framework (its graph, its runner, its checkpointer or saved state) and adds
what the framework lacks: a ledger row and a signed token per pause, one winner per answer, a
replay of the first outcome for the same answer and a conflict for another, the answer's
schema, expiry and authority, and side effects journalled so a re-run node does not repeat
them.  Nothing here imports a framework; each framework's guard is its own module, imported
lazily behind its optional extra (``pip install pausepoint[langgraph]``):
:mod:`pausepoint.guards.langgraph`, :mod:`pausepoint.guards.openai_agents`.

The core API (stable; later changes only add):

``Guard.open(store, *, framework, interactions, signer=None, clock=None, ttl_ms=...,
payload_key=None)``
    A guard for the framework named ``framework`` (text without ``:``) on a store URL
    (``memory:``, ``sqlite:PATH``, ``postgresql://...``) or an open ``StoreBundle``, with the
    registered :class:`~pausepoint.Interaction` s.  Every process resuming the same pauses
    opens its guard on the same store with the same ``signer`` (a :class:`~pausepoint.KeyRing`)
    and ``payload_key``.

``guard.pause(*, thread_id, interrupt_id, name, payload, tool_call_id="",
session_id="default", scope="default", turn=None, ttl_ms=None) -> GuardedInterrupt``
    Register the pause the framework raised, bound to its own ids (thread or conversation id,
    interrupt id, tool call id); idempotent when the framework raises the same interrupt
    again on a re-run (same token back).  The result carries ``token`` (signed),
    ``interrupt_id`` (the ledger id), ``framework_interrupt_id``, ``thread_id``,
    ``tool_call_id``, ``expires_at``, ``phase``.  Refusals are :class:`~pausepoint.PausepointError`
    with a code of :class:`~pausepoint.ErrorCode` (``interaction_unregistered``,
    ``payload_invalid``, ``tool_call_id_missing``, ``pause_conflict``, ``input_invalid``).

``guard.check(*, thread_id, name, payload, tool_call_id="", session_id=..., scope=...,
checkpointed=True) -> None``
    Refuse, as ``pause`` would and writing nothing, a pause the framework is about to raise:
    call it where the framework asks, so a refused pause never reaches the framework's state.

``guard.resume(token, answer, call_framework_resume, *, session_id="default",
scope="default", responder="", outcome=identity, run_id=None) -> Resumed``
    Verify the token, then expiry, binding, authority, the strict response schema, no unknown
    outcome, then one atomic consume.  Only the winner calls ``call_framework_resume(Answer)``
    (``Answer.value`` is the validated answer, ``Answer.data`` the same as JSON;
    ``.thread_id``, ``.interrupt_id`` (the framework's), ``.tool_call_id``, ``.name``,
    ``.session_id`` / ``.scope``: bind what the framework raises next alike);
    ``outcome(result)`` (JSON) is recorded.
    ``Resumed.replayed`` is True for the same answer again, with ``Resumed.outcome`` the first
    one's (``pending`` while the winner has not recorded it); a different answer is refused
    ``response_conflict``.  A framework failure in the winner is recorded and raised as
    :class:`FrameworkResumeFailed`.

``guard.expect(framework) -> guard``
    This guard, refused ``wiring_invalid`` unless opened for ``framework``.

``guard.effect(scope, key, fn) -> result``
    Run ``fn()`` at most once for the thread ``scope`` and ``key`` across re-runs and
    processes (journalled before and after, its JSON result kept); a re-run gets the first
    result.  Started and never finished (a process died inside it): refused
    ``outcome_unknown`` until ``guard.reconcile(scope, key, "applied" | "not_applied" |
    "compensated")``.

``guard.save_state(thread_id, text)`` / ``guard.load_state(thread_id) -> text | None``
    Keep a thread's latest framework state (for frameworks that hand their saved state to
    the application: the OpenAI Agents SDK's ``RunState`` JSON, ...), conditionally written.

Also: ``guard.pending(thread_id)`` (live pauses of a thread), ``guard.effect_status(scope,
key)``, ``guard.run_id(thread_id)`` / ``guard.ledger_id(thread_id, interrupt_id)`` (the ids
in the ledger), ``guard.service`` (the :class:`~pausepoint.PauseService`: expire, cancel,
rotate keys), ``guard.close()``.
"""

from pausepoint.guards.core import (
    Answer,
    FrameworkResumeFailed,
    Guard,
    GuardedInterrupt,
    Resumed,
)

__all__ = ["Answer", "FrameworkResumeFailed", "Guard", "GuardedInterrupt", "Resumed"]
