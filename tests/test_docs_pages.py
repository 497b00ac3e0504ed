"""The newcomer's pages say what the code does: every field of the vector schema has a
description and is named on docs/vectors.md, and the README links every docs page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pausepoint_conformance.protocol.schemas import schemas

ROOT = Path(__file__).resolve().parents[1]


def _properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``Model.field`` -> its schema, for the document and every definition."""
    out: dict[str, dict[str, Any]] = {}
    for model, node in [("VectorFile", schema), *schema.get("$defs", {}).items()]:
        for name, prop in node.get("properties", {}).items():
            out[f"{model}.{name}"] = prop
    return out


def test_every_vector_schema_field_has_a_description() -> None:
    props = _properties(schemas()["vector-file.json"])
    assert len(props) > 50
    missing = sorted(k for k, v in props.items() if not v.get("description"))
    assert not missing, f"fields without a description: {missing}"


def test_docs_vectors_names_every_field() -> None:
    page = (ROOT / "docs" / "vectors.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\$?\w+)`", page)) | set(re.findall(r'"(\w+)"', page))
    fields = {k.split(".", 1)[1] for k in _properties(schemas()["vector-file.json"])}
    fields.discard("schema_")
    assert not sorted(fields - named), sorted(fields - named)


def test_the_readme_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, page.name
