"""JSON text the engine writes itself and reads back: a run's continuation data, kept answers,
published payloads -- and the canonical text of a value validated as a plain ``dict``
(:mod:`pausepoint.core.registry`).  The same C encoder and scanner :mod:`json` uses, called
directly: on an operation's path ``json.loads`` and ``JSONEncoder.encode`` spend more in their
Python layers (frames, whitespace regexes, a new C encoder built on every call) than in the C
work itself.  What these return is what :mod:`json` returns for the same text or value, errors
included."""

from __future__ import annotations

import _json
import json
import threading
from typing import Any, Final

_DECODER: Any = json.JSONDecoder()
_SCAN = _json.make_scanner(_DECODER)
"""``json.loads``'s own scanner (``JSONDecoder().scan_once``: the C one, with no hooks)."""


def loads(text: str) -> Any:
    """``json.loads(text)``: the value the scanner reads when it takes the whole text (no
    whitespace around it), which is exactly what ``json.loads`` returns for it; any other text
    -- whitespace around the value, a byte-order mark, an error -- goes to ``json.loads``,
    which decides (and refuses) as it always did."""
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


STATE_ENCODER: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"),
                                        ensure_ascii=True, allow_nan=False)
"""A run's continuation data as JSON text: sorted keys, no spaces, ASCII, no NaN."""

_ENCODERS = threading.local()


def state_json(value: object) -> str:
    """``STATE_ENCODER.encode(value)``: the C encoder that ``encode`` would build on this call
    (with these options), built once per thread and kept.  Its circular-reference markers are
    empty again after every encoding that succeeds; one that fails may leave some behind, so
    the encoder is then dropped and the next call builds a fresh one."""
    encoder: Any = getattr(_ENCODERS, "encoder", None)
    if encoder is None:
        e = STATE_ENCODER
        encoder = _ENCODERS.encoder = _json.make_encoder(
            {}, e.default, _json.encode_basestring_ascii, None, e.key_separator,
            e.item_separator, e.sort_keys, e.skipkeys, e.allow_nan)
    try:
        return "".join(encoder(value, 0))
    except BaseException:
        _ENCODERS.encoder = None
        raise
