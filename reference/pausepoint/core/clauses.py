"""The contract's clause catalogue and its closed set of error codes.

Every clause has a stable slug id (never a section number).  ``spec/contract.md`` carries the
normative text of each clause under the same id, its clause line generated from this
catalogue (:func:`pausepoint.system.diagram.clause_line`); a test keeps the two in lockstep.
Code, tests, checks, vectors and docs cite clauses by these ids -- in code typed
:data:`~pausepoint.core.clause_ids.ClauseId`, the ``Literal`` of every id generated from this
catalogue, so that mypy catches a mistyped id -- and a test fails when a cited id does not
exist or a normative clause is cited by nothing.
"""

from __future__ import annotations

import enum
from typing import Final

import attrs

from pausepoint.core.clause_ids import ClauseId


class Group(enum.StrEnum):
    """Clause groups an implementation can claim (``core`` is always claimed)."""

    CORE = "core"
    TOKENS = "tokens"
    EXPIRY = "expiry"
    REPLAY = "replay"
    UNKNOWN_OUTCOME = "unknown-outcome"
    CANCEL = "cancel"
    MULTI_PAUSE = "multi-pause"
    DURABILITY = "durability"
    CONCURRENCY = "concurrency"
    LINEAGE = "lineage"


class Level(enum.StrEnum):
    """A clause's level: MUST (required of every implementation claiming its group) or SHOULD
    (recommended)."""

    MUST = "MUST"
    SHOULD = "SHOULD"


@attrs.frozen
class Clause:
    """One named requirement of the contract: its id, group, level and one-line summary."""

    id: ClauseId
    group: Group
    level: Level
    summary: str


def _c(cid: ClauseId, group: Group, summary: str, level: Level = Level.MUST) -> Clause:
    return Clause(id=cid, group=group, level=level, summary=summary)


G = Group

CLAUSES: Final[tuple[Clause, ...]] = (
    # -- lifecycle -------------------------------------------------------------------------
    _c("lifecycle.states", G.CORE,
       "A pause point is in exactly one of running, paused, resumable, consumed, expired, "
       "unknown_outcome, cancelled."),
    _c("lifecycle.transition.table", G.CORE,
       "Only the transitions of the lifecycle table happen; any other event is refused and "
       "changes nothing."),
    _c("lifecycle.terminal.absorbing", G.CORE,
       "consumed, expired and cancelled are absorbing: no event moves a pause out of them."),
    _c("lifecycle.outstanding.live", G.CORE,
       "The ledger counts a pause as outstanding exactly while it is paused, resumable or "
       "unknown_outcome."),
    _c("lifecycle.refusal.no-change", G.CORE,
       "A refused operation changes no stored state; a resume refused for expiry may first "
       "record the expiry it found due."),
    # -- pause -----------------------------------------------------------------------------
    _c("pause.interaction.registered", G.CORE,
       "A pause names a registered interaction; an unregistered name is refused with "
       "interaction_unregistered."),
    _c("pause.payload.schema", G.CORE,
       "A pause payload fits its interaction's payload schema and the size and depth bounds; "
       "otherwise it is refused with payload_invalid."),
    _c("pause.checkpoint.bound", G.CORE,
       "A pause is bound to a checkpoint id; with none it is refused with checkpoint_missing."),
    _c("pause.tool-call.bound", G.CORE,
       "A tool pause is bound to its tool call id; without one it is refused with "
       "tool_call_id_missing."),
    _c("pause.refusal.order", G.CORE,
       "Pause checks run in the fixed order registered, payload, checkpoint, tool call id; the "
       "first that fails decides the error code."),
    _c("pause.refusal.before-mint", G.CORE,
       "Every pause refusal happens before a token is minted: it leaves no ledger row and the "
       "run stays running."),
    _c("pause.signal.base-exception", G.CORE,
       "The pause signal derives from BaseException, so ordinary `except Exception` handling "
       "cannot turn a pause into a failure."),
    _c("pause.signal.single-catch", G.CORE,
       "The runner is the one place that catches the pause signal; it turns it into the run's "
       "terminal paused event."),
    _c("pause.published", G.CORE,
       "A pause is published with its interaction name, payload, interrupt id, tool call id, "
       "expiry, token and resumable flag."),
    # -- turn checkpoint -------------------------------------------------------------------
    _c("turn.resumable.earned", G.CORE,
       "A pause becomes resumable only after the turn-checkpoint write reports success."),
    _c("turn.write-failed.stays-paused", G.CORE,
       "A failed turn-checkpoint write leaves the pause paused with resumable false; resuming "
       "it is refused with not_resumable."),
    # -- run events ------------------------------------------------------------------------
    _c("run.events.vocabulary", G.CORE,
       "A run emits only thinking, text_delta, tool_call, tool_result, done, error, cancelled "
       "and paused events."),
    _c("run.events.single-terminal", G.CORE,
       "Every run ends with exactly one terminal event: done, error, cancelled or paused."),
    _c("run.paused.never-error", G.CORE,
       "A run that paused never ends in error."),
    _c("run.binding.live", G.LINEAGE,
       "A pause's run id and root run id are taken from the live run, never passed in; binding "
       "outside a run is refused with outside_run."),
    # -- resume ----------------------------------------------------------------------------
    _c("resume.refusal.order", G.CORE,
       "Resume checks run in the fixed order authenticity, known pause, expiry, binding, scope, "
       "authority, decided state, response schema, unknown outcome, turn recorded; the first "
       "that fails decides the error code."),
    _c("resume.token.authentic", G.TOKENS,
       "A resume presents a token that verifies under the key ring; otherwise it is refused "
       "with token_malformed or token_invalid."),
    _c("resume.expiry", G.EXPIRY,
       "A resume at or after expires_at is refused with pause_expired."),
    _c("resume.binding.run", G.LINEAGE,
       "The token's session must match the resuming request, and its run and root run must "
       "match whenever the request names them; otherwise binding_mismatch."),
    _c("resume.binding.scope", G.TOKENS,
       "A token redeemed from another scope is refused with scope_mismatch and the attempt is "
       "written to the audit sink."),
    _c("resume.authority", G.CORE,
       "Responder authority and time-sensitive permissions are checked at resume time, not "
       "carried over from pause time; otherwise responder_unauthorized."),
    _c("resume.response.schema", G.CORE,
       "The response fits the interaction's response schema and the size and depth bounds; "
       "otherwise response_invalid."),
    _c("resume.response.strict", G.CORE,
       "The response is validated strictly, without type coercion, and the run receives the "
       "validated value; an answer that only fits by coercion is refused with response_invalid."),
    _c("resume.unknown-outcome.blocks", G.UNKNOWN_OUTCOME,
       "A pause whose run has an unknown effect outcome is not resumed; it is refused with "
       "outcome_unknown."),
    _c("resume.refusal.keeps-pause", G.CORE,
       "A resume refused before the consume leaves the pause as it was, so a person can answer "
       "again with a valid response."),
    _c("resume.consume.single-winner", G.CONCURRENCY,
       "The consume is an atomic single-winner conditional update in the ledger."),
    _c("resume.consume.at-most-once", G.CORE,
       "A pause is consumed at most once."),
    _c("resume.continuation.recorded-turn", G.CORE,
       "A consumed pause continues from its recorded turn, with the response delivered to that "
       "pause point."),
    _c("resume.token.binds-one-pause", G.TOKENS,
       "A token redeems only the pause it was minted for."),
    # -- replay ----------------------------------------------------------------------------
    _c("replay.same-response", G.REPLAY,
       "Resuming a consumed pause with the same response returns the first result and runs "
       "nothing again."),
    _c("replay.different-response.conflict", G.REPLAY,
       "Resuming a consumed pause with a different response is refused with response_conflict."),
    _c("race.decided-once", G.CONCURRENCY,
       "Answer, expiry and cancel are decided once; a losing expiry or cancel is told which "
       "state won (pause_consumed, pause_expired, pause_cancelled), and a later answer to a "
       "consumed pause is a replay or response_conflict."),
    # -- expiry ----------------------------------------------------------------------------
    _c("expiry.transition", G.EXPIRY,
       "Once the clock reaches expires_at, a paused, resumable or unknown_outcome pause "
       "becomes expired."),
    _c("expiry.no-consume-after", G.EXPIRY,
       "No pause is consumed at or after its expires_at."),
    # -- effects ---------------------------------------------------------------------------
    _c("effect.journal.bracket", G.UNKNOWN_OUTCOME,
       "Each side effect is journalled as started before it runs and as finished after it "
       "returns."),
    _c("effect.unknown-outcome", G.UNKNOWN_OUTCOME,
       "An effect started and not journalled finished when the run stopped is an unknown "
       "outcome: surfaced, never retried optimistically."),
    _c("effect.reconcile", G.UNKNOWN_OUTCOME,
       "An unknown outcome is reconciled as applied or not_applied, or settled by a recovery "
       "decision (compensate or cancel), before any resume."),
    _c("effect.at-most-once", G.CORE,
       "A side effect completed before a pause is not run again by the resume or by a replay."),
    _c("effect.refusal.no-effect", G.CORE,
       "A refused resume runs no side effect."),
    # -- several pauses --------------------------------------------------------------------
    _c("multi.independent", G.MULTI_PAUSE,
       "Several pending pauses of one run are answered independently; answering one does not "
       "change the others."),
    # -- cancel ----------------------------------------------------------------------------
    _c("cancel.distinct", G.CANCEL,
       "Cancellation is distinct from pause: a cancelled pause's token is refused with "
       "pause_cancelled."),
    _c("cancel.propagates", G.CANCEL,
       "Cancelling a run cancels the live pauses of its child runs."),
    # -- the run level ---------------------------------------------------------------------
    _c("run.lifecycle.table", G.CORE,
       "A run moves only through the run table (running, paused, done, error, cancelling, "
       "cancelled); any other event is refused with invalid_transition and changes nothing."),
    _c("run.ownership.lease", G.CONCURRENCY,
       "Whoever drives a run first owns it under a lease; a restart takes over only a run whose "
       "lease was released, ran out, or is its own."),
    _c("run.ownership.fencing", G.CONCURRENCY,
       "Every run write and every effect journal start is conditional on the writer's epoch, "
       "and an effect journal start also on the writer's lease being live; a driver that lost "
       "the run writes nothing more and applies no effect."),
    _c("run.continuation.belongs-to-step", G.CONCURRENCY,
       "A continuation runs only if its pause belongs to the run's current step; one for a step "
       "the run has left is dropped."),
    _c("run.restart.concurrent", G.CONCURRENCY,
       "Several restarters beside several live servers on one store recover each run once: no "
       "effect twice, one recovery pause per effect in doubt."),
    _c("run.cancel.in-flight", G.CANCEL,
       "A cancel fences the run's driver: an effect started before it may finish, no effect "
       "starts after it, and the run is never written back to running or done."),
    _c("run.cancel.finished", G.CANCEL,
       "Cancelling a run that ended done or error is refused with invalid_transition and "
       "changes nothing."),
    _c("run.child.cancelling-parent", G.CANCEL,
       "Starting a child run under a cancelling or cancelled parent, or under a parent with "
       "a cancelling or cancelled run above it, is refused with pause_cancelled, atomically "
       "with respect to the parent's cancel."),
    _c("run.store-failure.recoverable", G.DURABILITY,
       "A store failure while a run executes does not end the run in error: it stays running, "
       "its lease released, and a restart continues it."),
    # -- durability ------------------------------------------------------------------------
    _c("durability.restart", G.DURABILITY,
       "A pause survives a crash and restart of the process: it is neither lost nor answered "
       "twice."),
    _c("durability.token.reissue", G.DURABILITY,
       "After a restart the same token is published again for the same pause."),
    _c("durability.commit-per-change", G.DURABILITY,
       "Every state change is committed durably before it is reported."),
    # -- tokens ----------------------------------------------------------------------------
    _c("token.claims", G.TOKENS,
       "A token carries the interrupt id, run id, root run id, session, thread, checkpoint "
       "id, scope, interaction name, tool call id, payload digest, issued-at, expires-at and "
       "format version."),
    _c("token.integrity", G.TOKENS,
       "Any altered byte makes a token invalid."),
    _c("token.parse.strict", G.TOKENS,
       "Token parsing is bounded in length, canonical in encoding and never takes the "
       "algorithm from the token."),
    _c("token.key-id", G.TOKENS,
       "A token names its signing key by key id; an unknown key id is refused with "
       "token_invalid."),
    _c("token.rotation.drain", G.TOKENS,
       "A key is retired only when the drain proof shows no outstanding token signed by it; "
       "retiring earlier is refused with key_not_drained."),
    _c("token.discloses", G.TOKENS,
       "A token discloses its claims and key id and nothing of its payload: the payload digest "
       "is keyed with a per-deployment secret."),
    # -- wiring ----------------------------------------------------------------------------
    _c("wiring.consistent", G.CORE,
       "The composition function refuses inconsistent wiring (durable checkpoints with a "
       "volatile ledger, a token encoder without its decoder) with wiring_invalid."),
    _c("wiring.no-interaction-no-tool", G.CORE,
       "With no interaction registered, nothing offers the model an ask-the-user tool."),
    _c("gate.separate", G.CORE,
       "An approval gate that can decide at once does not pause; only a gate that asks a "
       "person raises the pause signal."),
    _c("status.distinguishes", G.CORE,
       "The status query tells apart safely suspended, partially complete, still cancelling and "
       "waiting on an unknown outcome."),
    _c("input.bounded", G.CORE,
       "Malformed, oversized or deeply nested input gets a typed error with a code from the "
       "closed set and changes no stored state."),
    _c("input.canonical", G.REPLAY,
       "Answers and payloads are compared and digested as RFC 8785 canonical JSON, and JSON "
       "text with a duplicate object key is refused."),
)
"""Every clause of the contract, in the order of ``spec/contract.md``."""

CLAUSE_BY_ID: Final[dict[str, Clause]] = {c.id: c for c in CLAUSES}


def clause(clause_id: str) -> ClauseId:
    """Return ``clause_id`` as a :data:`ClauseId` if it names a clause, else raise ``KeyError``
    (used to cite clauses, and to type an id read from outside the code)."""
    found = CLAUSE_BY_ID.get(clause_id)
    if found is None:
        raise KeyError(f"no clause {clause_id!r} in the catalogue")
    return found.id


class ErrorCode(enum.StrEnum):
    """The closed set of error codes. Every refusal carries exactly one of these."""

    INTERACTION_UNREGISTERED = "interaction_unregistered"
    PAYLOAD_INVALID = "payload_invalid"
    CHECKPOINT_MISSING = "checkpoint_missing"
    TOOL_CALL_ID_MISSING = "tool_call_id_missing"
    CHECKPOINT_WRITE_FAILED = "checkpoint_write_failed"
    TOKEN_MALFORMED = "token_malformed"
    TOKEN_INVALID = "token_invalid"
    PAUSE_UNKNOWN = "pause_unknown"
    PAUSE_EXPIRED = "pause_expired"
    PAUSE_CONSUMED = "pause_consumed"
    PAUSE_CANCELLED = "pause_cancelled"
    BINDING_MISMATCH = "binding_mismatch"
    SCOPE_MISMATCH = "scope_mismatch"
    RESPONDER_UNAUTHORIZED = "responder_unauthorized"
    RESPONSE_INVALID = "response_invalid"
    RESPONSE_CONFLICT = "response_conflict"
    OUTCOME_UNKNOWN = "outcome_unknown"
    NOT_RESUMABLE = "not_resumable"
    NOT_DUE = "not_due"
    INVALID_TRANSITION = "invalid_transition"
    OUTSIDE_RUN = "outside_run"
    KEY_UNKNOWN = "key_unknown"
    KEY_NOT_DRAINED = "key_not_drained"
    WIRING_INVALID = "wiring_invalid"
    STORE_UNAVAILABLE = "store_unavailable"
    PAUSE_CONFLICT = "pause_conflict"
    INPUT_INVALID = "input_invalid"
    STORE_CORRUPT = "store_corrupt"
    PROTOCOL_INVALID = "protocol_invalid"


ERROR_DOCS: Final[dict[ErrorCode, str]] = {
    ErrorCode.INTERACTION_UNREGISTERED: "the pause names an interaction nobody registered",
    ErrorCode.PAYLOAD_INVALID: "the pause payload does not fit its schema or the size/depth bounds",
    ErrorCode.CHECKPOINT_MISSING: "the pause is bound to no checkpoint",
    ErrorCode.TOOL_CALL_ID_MISSING: "a tool pause has no tool call id",
    ErrorCode.CHECKPOINT_WRITE_FAILED: "the turn-checkpoint write did not report success",
    ErrorCode.TOKEN_MALFORMED: "the token is not a well-formed, bounded, canonical token",
    ErrorCode.TOKEN_INVALID: "the token's signature or key id does not verify",
    ErrorCode.PAUSE_UNKNOWN: "no pause with this interrupt id exists in the ledger",
    ErrorCode.PAUSE_EXPIRED: "the pause expired (it was decided by expiry)",
    ErrorCode.PAUSE_CONSUMED: "the pause was already answered (it was decided by an answer)",
    ErrorCode.PAUSE_CANCELLED: "the pause was cancelled (it was decided by cancellation)",
    ErrorCode.BINDING_MISMATCH: "the token's run, root run or session is not the request's",
    ErrorCode.SCOPE_MISMATCH: "the token was minted for another scope",
    ErrorCode.RESPONDER_UNAUTHORIZED: "the responder has no authority for this decision now",
    ErrorCode.RESPONSE_INVALID: "the response does not fit its schema or the size/depth bounds",
    ErrorCode.RESPONSE_CONFLICT: "the pause was answered with a different response",
    ErrorCode.OUTCOME_UNKNOWN: "an effect's outcome is unknown and must be reconciled first",
    ErrorCode.NOT_RESUMABLE: "the turn checkpoint was never recorded, so nothing can continue",
    ErrorCode.NOT_DUE: "the pause's expiry time has not been reached",
    ErrorCode.INVALID_TRANSITION: "the lifecycle table has no such transition from this state",
    ErrorCode.OUTSIDE_RUN: "a run binding was asked for outside any run",
    ErrorCode.KEY_UNKNOWN: "no key with this key id is in the key ring",
    ErrorCode.KEY_NOT_DRAINED: "tokens signed by this key are still outstanding",
    ErrorCode.WIRING_INVALID: "the deployment's ports are wired inconsistently",
    ErrorCode.STORE_UNAVAILABLE: ("a store did not answer; nothing was changed, unless the failure "
                                  "hit the commit itself, when the outcome is unknown"),
    ErrorCode.PAUSE_CONFLICT: ("the interrupt id already names a pause with another binding, "
                               "name or payload"),
    ErrorCode.INPUT_INVALID: "an identifier is not text, or holds a NUL or a lone surrogate",
    ErrorCode.STORE_CORRUPT: "a stored row is not a record this implementation wrote",
    ErrorCode.PROTOCOL_INVALID: ("an adapter-protocol line is too long, too deeply nested, not "
                                 "strict JSON, or comes before the handshake"),
}
