"""JSON Schemas of every wire document, generated from the pydantic models.

``spec/schemas/`` holds the output of :func:`schemas`; a test keeps the committed files equal
to it.  To regenerate after changing a model::

    python -m pausepoint_conformance.protocol.schemas spec/schemas
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Union, cast

from pydantic import Field, TypeAdapter

from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    REQUEST_MODELS,
    RESPONSE_MODELS,
    SCHEMA_BASE,
    Op,
)
from pausepoint_conformance.vectors.replay import FORMAT_VERSION, VectorFile

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _finish(name: str, schema: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    out: dict[str, Any] = {"$schema": DRAFT, "$id": SCHEMA_BASE + name, "title": title,
                           "description": description}
    out.update({k: v for k, v in schema.items() if k not in ("title", "description")})
    return out


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every message of the adapter protocol and the vector
    file format."""
    out: dict[str, dict[str, Any]] = {}
    # Union[...] of a tuple built at run time: ``X | Y`` cannot spell it, and without the
    # Union the tuple itself is not a type (ruff's UP007 rewrite broke this once).
    union = Annotated[Union[tuple(REQUEST_MODELS.values())],  # type: ignore[valid-type]  # noqa: UP007
                      Field(discriminator="op")]
    out["adapter-request.json"] = _finish(
        "adapter-request.json", TypeAdapter(cast(Any, union)).json_schema(),
        "pausepoint adapter protocol: a request line",
        f"One line the suite writes to the implementation's stdin (protocol "
        f"{PROTOCOL_VERSION}): {{\"id\": n, \"op\": ..., \"args\": {{...}}}}.")
    for op in Op:
        name = f"adapter-response-{op.value.replace('_', '-')}.json"
        out[name] = _finish(
            name, RESPONSE_MODELS[op].model_json_schema(),
            f"pausepoint adapter protocol: the response to {op.value}",
            f"The line an implementation answers a {op.value} request with: the request's id "
            "and a result (ok with the operation's data, refused with an error code, skipped "
            "with a reason, or errored with a traceback).")
    out["vector-file.json"] = _finish(
        "vector-file.json", VectorFile.model_json_schema(by_alias=True),
        "pausepoint scenario vectors",
        f"A file of scenario vectors (format version {FORMAT_VERSION}) written by "
        "`pausepoint scenarios`: each case's scripted runs, operations, the expected outcome of "
        "each (computed by the reference model) and the observable state after it.")
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in schemas().items():
        p = directory / name
        p.write_text(render(schema), encoding="utf-8")
        paths.append(p)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    target = Path(args[0] if args else "spec/schemas")
    for p in write(target):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
