"""External tools some tests need (``node``, ``dot``): a missing one skips the test locally and
fails it under ``CI`` (where ``.ci/run`` installs them), so a skip never hides a missing install
step."""

from __future__ import annotations

import os
import shutil

import pytest


def need(tool: str, install: str) -> str:
    """The path of ``tool``; without it, skip (locally) or fail (under ``CI``) saying how to
    install it."""
    path = shutil.which(tool)
    if path is not None:
        return path
    why = f"{tool} is not installed ({install})"
    if os.environ.get("CI"):
        pytest.fail(f"{why}: under CI every tool the tests need must be there")
    pytest.skip(why)
