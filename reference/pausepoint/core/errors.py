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
