"""Deterministic alterations of a token, for the checks (and any tool that wants them).

Every alteration is a function of the token alone -- no randomness -- so a check that presents
them catches the same lenient decoder on every run, whatever the signature happens to be.
Among them is **every non-canonical encoding of the last character** of each base64url
segment: a segment whose length is 2 or 3 modulo 4 leaves 4 or 2 bits of its last character
unused, and a lenient decoder ignores them, reading 15 (or 3) altered tokens as the original.
The token is opaque to the suite; an implementation claiming ``tokens`` must refuse *any*
altered token, so presenting these to a token of another format is still a fair test.
"""

from __future__ import annotations

import string
from typing import Final

B64URL: Final[str] = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
_VALUE: Final[dict[str, int]] = {c: i for i, c in enumerate(B64URL)}


def noncanonical_last(segment: str) -> list[str]:
    """Every other spelling of ``segment`` that differs only in the unused low bits of its
    last character (empty when the segment is not unpadded base64url or uses every bit)."""
    if not segment or any(c not in _VALUE for c in segment):
        return []
    unused = {2: 4, 3: 2}.get(len(segment) % 4, 0)
    if not unused:
        return []
    value = _VALUE[segment[-1]]
    base = value & ~((1 << unused) - 1)
    return [segment[:-1] + B64URL[base | low] for low in range(1 << unused)
            if base | low != value]


def _changed(ch: str) -> str:
    """Another character of the same kind (so the token keeps its shape)."""
    if ch.isdigit():
        return "7" if ch != "7" else "3"
    if ch.isalpha():
        return ("B" if ch != "B" else "C") if ch.isupper() else ("b" if ch != "b" else "c")
    return "A"


def alter(token: str, position: int) -> str:
    """``token`` with the character at ``position`` (negative counts from the end) changed to
    another character of the same kind."""
    i = position % len(token)
    return token[:i] + _changed(token[i]) + token[i + 1:]


def token_mutations(token: str) -> dict[str, str]:
    """Named, deterministic alterations of ``token``, none equal to it: characters changed at
    fixed positions, every non-canonical last character of every dot-separated segment,
    characters removed and added, padding appended, segments dropped and repeated."""
    out: dict[str, str] = {}
    n = len(token)
    for i in sorted({0, n // 4, n // 2, 3 * n // 4, n - 2}):
        out[f"char {i} changed"] = alter(token, i)
    segments = token.split(".")
    for k, seg in enumerate(segments):
        for j, spelled in enumerate(noncanonical_last(seg)):
            out[f"segment {k}: non-canonical last character #{j + 1}"] = ".".join(
                [*segments[:k], spelled, *segments[k + 1:]])
    out.update({
        "last char removed": token[:-1], "first char removed": token[1:],
        "a char appended": token + "A", "padding appended": token + "==",
    })
    if len(segments) > 1:
        out["last segment dropped"] = ".".join(segments[:-1])
        out["last segment repeated"] = ".".join([*segments, segments[-1]])
    return {what: bad for what, bad in out.items() if bad != token}
