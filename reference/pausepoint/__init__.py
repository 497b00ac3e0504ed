"""pausepoint: the interrupt contract for agent harnesses -- reference implementation."""

from .clauses import CLAUSES, Clause, ErrorCode, Group
from .errors import PausepointError
from .lifecycle import Phase, PauseState, step

__all__ = ["CLAUSES", "Clause", "ErrorCode", "Group", "PausepointError", "Phase", "PauseState", "step"]
__version__ = "0.1.0"
