"""pausepoint: the interrupt contract for agent harnesses -- reference implementation."""

from pausepoint.core.clauses import CLAUSES, Clause, ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import PauseState, Phase, step

__all__ = ["CLAUSES", "Clause", "ErrorCode", "Group", "PauseState", "PausepointError", "Phase", "step"]
__version__ = "0.1.0"
