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
import shlex
import shutil
import sys
from typing import Any, cast

from pausepoint_conformance.protocol.port import Adapter, AdapterFactory


class AdapterSpecError(ValueError):
    """The adapter spelling cannot give an adapter; the message names it and says what to do."""


def _failure(exc: BaseException) -> str:
    """An exception raised by user code, as one line (a syntax error with its line)."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def load_factory(spec: str) -> AdapterFactory:
    """Import ``MODULE:CALLABLE`` or ``path.py:CALLABLE``."""
    if ":" not in spec:
        raise AdapterSpecError(f"{spec!r} is not MODULE:CALLABLE, path/to/file.py:CALLABLE, "
                               'cmd:"<command line>" or reference[:sqlite|:memory]')
    where, _, name = spec.rpartition(":")
    if where.endswith(".py") or os.sep in where:
        if not os.path.isfile(where):
            raise AdapterSpecError(f"adapter file {where} does not exist; give the path of a "
                                   "Python file, e.g. adapters/mine.py:make_adapter")
        mod_name = "pausepoint_adapter_" + os.path.basename(where).removesuffix(".py")
        loader_spec = importlib.util.spec_from_file_location(mod_name, where)
        if loader_spec is None or loader_spec.loader is None:
            raise AdapterSpecError(f"cannot load {where} as Python; give a .py file")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[mod_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(mod_name, None)
            raise AdapterSpecError(f"adapter file {where} failed to load: {_failure(exc)}; "
                                   "fix it and run again") from exc
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            missing = getattr(exc, "name", None)
            if missing and not where.startswith(missing):  # the module is there, a need is not
                extra = " (the framework peers: pip install 'pausepoint[peers]')" \
                    if where.startswith("pausepoint_conformance.peers") else ""
                raise AdapterSpecError(f"{where} needs {missing}, which is not installed; "
                                       f"install it{extra}") from exc
            raise AdapterSpecError(f"cannot import {where!r}: {exc}; is it installed, or on "
                                   "PYTHONPATH?") from exc
        except Exception as exc:
            raise AdapterSpecError(f"module {where} failed to import: {_failure(exc)}; "
                                   "fix it and run again") from exc
    factory: Any = getattr(module, name, None)
    if not callable(factory):
        raise AdapterSpecError(f"{where!r} has no callable {name!r}; name the factory that "
                               "returns your adapter")
    return cast(AdapterFactory, factory)


def build_adapter(spec: str) -> Adapter:
    """Call the factory ``spec`` names; its failure, or a result that is not an adapter, is an
    :class:`AdapterSpecError`."""
    factory = load_factory(spec)
    try:
        adapter = factory()
    except Exception as exc:
        raise AdapterSpecError(f"adapter factory {spec} raised {_failure(exc)}; fix the "
                               "factory (or what it opens) and run again") from exc
    if not isinstance(adapter, Adapter):
        missing = [m for m in ("hello", "reset", "start", "resume", "cancel", "advance_clock",
                               "crash_restart", "reconcile", "pause_state", "effect_count",
                               "race_resume", "close") if not callable(getattr(adapter, m, None))]
        raise AdapterSpecError(f"adapter factory {spec} returned a {type(adapter).__name__}, "
                               f"not an adapter (missing {', '.join(missing)}); see "
                               "pausepoint_conformance.protocol.port.Adapter")
    return adapter


def command_argv(command: str) -> list[str]:
    """The argv of a ``cmd:`` command line, with its program found on ``PATH``."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise AdapterSpecError(f"cmd:{command}: {exc} (an unbalanced quote?); quote the "
                               "whole command once, e.g. cmd:\"node adapter.js\"") from None
    if not argv:
        raise AdapterSpecError('cmd: needs a command line, e.g. cmd:"node adapter.js"')
    program = argv[0]
    found = (os.path.isfile(program) and os.access(program, os.X_OK)) if os.sep in program \
        else shutil.which(program) is not None
    if not found:
        raise AdapterSpecError(f"cmd:{command}: the program {program!r} is not found or not "
                               "executable; install it or give its full path")
    return argv


def make_adapter(spec: str, *, timeout: float = 30.0,
                 scratch: str | None = None) -> tuple[Adapter, str]:
    """The adapter a spelling names, and a short display name for reports.  ``scratch`` is
    where the embedded reference keeps its SQLite files (default: the system's temporary
    directory).  ``timeout`` bounds every exchange with a ``cmd:`` adapter, the handshake
    included."""
    from pausepoint_conformance.adapters.reference import ReferenceAdapter
    from pausepoint_conformance.protocol.stdio import StdioAdapter

    if scratch is not None and not os.path.isdir(scratch):
        raise AdapterSpecError(f"--scratch {scratch}: no such folder; create it or leave "
                               "--scratch out")
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
        return StdioAdapter(command_argv(command), timeout=timeout,
                            start_timeout=timeout), spec
    return build_adapter(spec), spec
