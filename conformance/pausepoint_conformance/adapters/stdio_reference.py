"""The reference implementation on the stdio protocol, so the protocol is proven end to end.

Usage::

    python -m pausepoint_conformance.adapters.stdio_reference [--store sqlite|memory]
    pausepoint conform --adapter cmd:"python -m pausepoint_conformance.adapters.stdio_reference"

``--factory MODULE:CALLABLE`` serves any in-process adapter instead (a zero-argument callable
returning an :class:`~pausepoint_conformance.protocol.port.Adapter`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pausepoint_conformance.adapters.loader import load_factory
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.stdio import serve


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pausepoint_conformance.adapters.stdio_reference", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--factory", metavar="MODULE:CALLABLE",
                        help="serve this adapter factory instead of the reference")
    args = parser.parse_args(argv)
    adapter: Adapter = (load_factory(args.factory)() if args.factory
                        else ReferenceAdapter(args.store))
    return serve(adapter)


if __name__ == "__main__":
    sys.exit(main())
