"""Choosing an adapter from its command-line spelling.

``--adapter`` takes one of:

* ``reference`` or ``reference:sqlite`` -- the embedded reference on SQLite (a temporary
  directory), in process; ``reference:memory`` -- the same on the in-memory store;
* ``cmd:"<command line>"`` -- any implementation, in any language, speaking the stdio protocol
  (``spec/adapter-protocol.md``), started as a subprocess;
* ``MODULE:CALLABLE`` or ``path/to/file.py:CALLABLE`` -- an in-process Python adapter: a
  zero-argument callable returning an object with the
  :class:`~pausepoint_conformance.protocol.port.Adapter` methods.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, cast

from pausepoint_conformance.protocol.port import Adapter, AdapterFactory


class AdapterSpecError(ValueError):
    pass


def load_factory(spec: str) -> AdapterFactory:
    """Import ``MODULE:CALLABLE`` or ``path.py:CALLABLE``."""
    if ":" not in spec:
        raise AdapterSpecError(f"{spec!r} is not MODULE:CALLABLE")
    where, _, name = spec.rpartition(":")
    try:
        if where.endswith(".py") or os.sep in where:
            mod_name = "pausepoint_adapter_" + os.path.basename(where).removesuffix(".py")
            loader_spec = importlib.util.spec_from_file_location(mod_name, where)
            if loader_spec is None or loader_spec.loader is None:
                raise AdapterSpecError(f"cannot load {where!r}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_name] = module
            loader_spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except ImportError as exc:
        raise AdapterSpecError(f"cannot import {where!r}: {exc}") from exc
    factory: Any = getattr(module, name, None)
    if not callable(factory):
        raise AdapterSpecError(f"{where!r} has no callable {name!r}")
    return cast(AdapterFactory, factory)


def make_adapter(spec: str, *, timeout: float = 30.0,
                 scratch: str | None = None) -> tuple[Adapter, str]:
    """The adapter a spelling names, and a short display name for reports.  ``scratch`` is
    where the embedded reference keeps its SQLite files (default: the system's temporary
    directory)."""
    from pausepoint_conformance.adapters.reference import ReferenceAdapter
    from pausepoint_conformance.protocol.stdio import StdioAdapter

    if spec in ("reference", "reference:sqlite"):
        return ReferenceAdapter("sqlite", scratch=scratch), "reference:sqlite"
    if spec == "reference:memory":
        return ReferenceAdapter("memory", scratch=scratch), spec
    if spec.startswith("reference:"):
        raise AdapterSpecError(f"unknown reference store in {spec!r}: use reference:sqlite or "
                               "reference:memory")
    if spec.startswith("cmd:"):
        command = spec[len("cmd:"):].strip()
        if len(command) >= 2 and command[0] == command[-1] and command[0] in "\"'":
            command = command[1:-1]
        if not command:
            raise AdapterSpecError('cmd: needs a command line, e.g. cmd:"node adapter.js"')
        return StdioAdapter(command, timeout=timeout), spec
    return load_factory(spec)(), spec
