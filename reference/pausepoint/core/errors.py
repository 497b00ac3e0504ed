"""The one exception type the services raise for a refusal."""

from __future__ import annotations

from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode


class PausepointError(Exception):
    """A refused operation: a code from the closed set, the clause that refused it, and a
    message that reads as documentation.  A refusal never changes stored state."""

    def __init__(self, code: ErrorCode, clause: ClauseId, message: str) -> None:
        if clause not in CLAUSE_BY_ID:  # pragma: no cover - a programming error
            raise KeyError(f"refusal cites unknown clause {clause!r}")
        super().__init__(f"[{code.value}] {message} ({clause})")
        self.code = code
        self.clause: ClauseId = clause
        self.message = message


class StoreConflict(PausepointError):
    """``store_unavailable`` of a kind that is safe to try again: the database aborted the
    transaction to break a conflict between concurrent ones -- PostgreSQL's deadlock victim
    (SQLSTATE 40P01) or serialization failure (40001) -- before any of it committed, so
    nothing of it was changed.  The unit of work it aborted may run again from its start
    (:meth:`pausepoint.engine.service.PauseService.atomically` does, a bounded number of
    times).  A store raises it only when nothing of the unit committed, never for a failure
    of a commit whose outcome is unknown."""

    def __init__(self, clause: ClauseId, message: str) -> None:
        super().__init__(ErrorCode.STORE_UNAVAILABLE, clause, message)
