"""What every peer adapter shares: turning the framework's calls into protocol results, and the
handshake.

A peer adapter realises the protocol with its framework's own primitives only; these helpers
keep the bookkeeping around them in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import TypeVar

from pausepoint.clauses import Group

from .. import __version__ as suite_version
from ..port import errored_from
from ..protocol import PROTOCOL_VERSION, Errored, HelloData, Implementation, Ok, Refused, Result

T = TypeVar("T")


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
    except Exception as exc:  # noqa: BLE001 - reported, never raised
        refused = refusal(exc)
        return refused if refused is not None else errored_from(exc)


def as_result(value: T | Refused | Errored) -> Result[T]:
    """An :func:`attempt`'s outcome as a protocol result."""
    if isinstance(value, (Refused, Errored)):
        return value
    return Ok(data=value)


def hello(*, name: str, distribution: str, homepage: str, groups: Sequence[Group],
          notes: str) -> Ok[HelloData]:
    """The handshake of a peer: the framework's installed version, the groups it claims."""
    return Ok(data=HelloData(
        implementation=Implementation(name=name, version=version(distribution),
                                      language="python", homepage=homepage),
        protocol=PROTOCOL_VERSION, groups=list(groups),
        notes=f"{notes}; suite {suite_version}"))
