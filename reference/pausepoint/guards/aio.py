"""The guard's resume for a framework whose resume is a coroutine (Pydantic AI's
``agent.run``, a llama-index workflow's handler): :func:`resume_async`."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pausepoint.guards.core import Answer, Guard, Resumed

R = TypeVar("R")


async def resume_async(guard: Guard, token: object, answer: object,
                       call_framework_resume: Callable[[Answer], Coroutine[Any, Any, R]],
                       **kwargs: Any) -> Resumed[R]:
    """:meth:`Guard.resume` awaited: the guard's checks and its consume run in a worker
    thread (they are the store's blocking calls), and the winner's
    ``call_framework_resume(answer)`` runs on the caller's event loop -- free meanwhile --
    while the worker waits for it.  ``kwargs`` are :meth:`Guard.resume`'s."""
    loop = asyncio.get_running_loop()

    def call(a: Answer) -> R:
        return asyncio.run_coroutine_threadsafe(call_framework_resume(a), loop).result()
    return await asyncio.to_thread(functools.partial(guard.resume, token, answer, call, **kwargs))
