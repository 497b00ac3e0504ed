"""Canonical JSON, digests and input bounds -- pure helpers shared by tokens and services.

*Canonical JSON* is the one serialisation the project hashes, signs and compares: the JSON
Canonicalization Scheme, RFC 8785 (JCS), as implemented by the ``rfc8785`` package -- keys sorted
by their UTF-16 code units, no whitespace, numbers written as ECMAScript writes them (so ``1.0``
and ``1`` are the same text, ``1``, and ``-0.0`` is ``0``), strings as UTF-8 with only the
escapes JCS prescribes.  Every language with a JCS library gets the same bytes, so an answer
re-serialised by JavaScript compares equal to the Python original (``replay.same-response``).

* only JSON values are allowed: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``,
  ``bool``, ``None`` and finite ``float`` (subclasses of ``str``/``int``/``float`` such as
  ``StrEnum`` members serialise as their base value; containers must be exactly ``dict`` or
  ``list``).  Tuples, sets, bytes, non-string keys, NaN, the infinities, integers outside
  I-JSON's exact range (magnitude above 2**53 - 1) and lone surrogates are refused (with
  :class:`ValueError`) instead of being coerced;
* :func:`loads_strict` is the one parser of JSON text from outside: duplicate object keys,
  ``NaN``/``Infinity`` and lone surrogates are refused, never resolved "last one wins".

:func:`digest` is the SHA-256 hex digest of a text's UTF-8 bytes (the response digest the ledger
compares for replay); :func:`keyed_digest` is HMAC-SHA256 under a per-deployment secret (the
payload digest a token carries, so a token does not let anyone guess its payload offline).

:func:`check_bounds` is the size and depth bound applied to pause payloads and resume responses
(clauses ``pause.payload.schema``, ``resume.response.schema``, ``input.bounded``).  It never
raises and never recurses, so hostile input (deeply nested, cyclic, huge) gets a message back
instead of a ``RecursionError`` or a long serialisation.  It also refuses strings that are not
Unicode text -- a lone surrogate code point (U+D800 to U+DFFF), which Python's ``str`` and JSON's
``\\uXXXX`` escapes can carry but UTF-8 cannot: another language would read such a value
differently (or not at all), so its digest, and so replay, would not agree (I-JSON, RFC 7493).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from collections.abc import Callable
from typing import Final

import rfc8785

try:  # CPython's own SHA-256 (3.12 and later: in _sha2), not OpenSSL's
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # pragma: no cover - a Python built without it
        _sha256 = hashlib.sha256
_SHA256: Final[Callable[..., hashlib._Hash]] = _sha256
"""SHA-256, the same digest as ``hashlib.sha256``, by CPython's built-in module where it has
one: ``hashlib.sha256`` and ``hmac.digest`` go through OpenSSL's EVP machinery (a digest
fetched from its provider, a context allocated), some 600 cache lines more per pause ->
resume cycle than this small module's -- and each of our cycles runs with a cold cache.  But
OpenSSL hashes a long text several times faster (here 15 us for 32 KB, the built-in 83 us), so
a text of more than :data:`OPENSSL_FROM` bytes goes to OpenSSL."""
OPENSSL_FROM: Final = 4096
"""The length (bytes) above which a text is hashed by OpenSSL, not :data:`_SHA256`: about
where the embedding cycle, cold, times the same with either hashing its payload's HMAC."""

MAX_BYTES: Final[int] = 65536
"""Default bound on the length of a value's canonical JSON text (it is ASCII: chars == bytes)."""

MAX_SAFE_INTEGER: Final[int] = 2**53 - 1
"""Largest integer magnitude JSON carries exactly in every language (I-JSON, RFC 7493)."""

MAX_DEPTH: Final[int] = 32
"""Default bound on nesting: a scalar has depth 0, ``[]``/``{}`` depth 1, ``[[1]]`` depth 2."""


_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_ESCAPE_ASCII: Final = json.encoder.encode_basestring_ascii
"""The JSON string literal ``json.dumps(text)`` writes (every non-ASCII character escaped)."""


def _not_json(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


def compact_encoder(*, sort_keys: bool) -> Callable[[object], str]:
    """``json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
    sort_keys=sort_keys).encode`` -- the same text -- without building its C encoder again on
    every call (CPython's ``_json``; elsewhere that ``encode`` itself).  A value it cannot
    write raises ``TypeError`` or ``ValueError``, as ``encode`` does; it does not look for
    cycles (give it flat values)."""
    try:
        from _json import make_encoder
    except ImportError:  # pragma: no cover - CPython has it
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                                sort_keys=sort_keys).encode
    encode = make_encoder(None, _not_json, json.encoder.encode_basestring, None, ":", ",",
                          sort_keys, False, False)

    def encoded(value: object) -> str:
        if type(value) is str:  # as JSONEncoder.encode: a str is one literal, not chunks
            return json.encoder.encode_basestring(value)
        return "".join(encode(value, 0))
    return encoded


_SORTED_COMPACT: Final = compact_encoder(sort_keys=True)


def is_unicode(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (U+D800 to U+DFFF): whether it is Unicode
    text, which UTF-8 can carry (ASCII text is, at once)."""
    return text.isascii() or _SURROGATE.search(text) is None


def is_storable(text: str) -> bool:
    """Whether every store keeps ``text`` as the same text: Unicode (:func:`is_unicode`) with
    no NUL (PostgreSQL refuses one).  Joined texts are storable when each is: joining makes no
    NUL nor surrogate, so a caller checks many at once."""
    # is_unicode(text), inlined: every store statement checks its parameters here
    return "\x00" not in text and (text.isascii() or _SURROGATE.search(text) is None)


def _unicode(text: str) -> None:
    if _SURROGATE.search(text):
        raise ValueError("a string holds a lone surrogate (U+D800 to U+DFFF): it is not "
                         "Unicode text")


def _scalar_text(value: object, room: int = 2**63, unicode_only: bool = False) -> str | None:
    """The canonical text of a JSON scalar, or None if ``value`` is not one.  A string longer
    than ``room`` is refused before it is serialised (its text is at least that long)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise ValueError("an integer beyond 2**53 - 1 is not exact in JSON (I-JSON)")
        return int.__repr__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("NaN and infinities are not JSON")
        # ECMAScript's text, not repr's: repr is shorter for some (1.5e-05 is 0.000015, 1e+20
        # is 100000000000000000000), so its length would not bound the canonical text's
        return rfc8785.dumps(value).decode("ascii")
    if isinstance(value, str):
        if len(value) > room:
            raise ValueError("string too long")
        if unicode_only:
            _unicode(value)
        return _ESCAPE_ASCII(str.__str__(value))
    return None


def check_bounds(value: object, max_bytes: int = MAX_BYTES,
                 max_depth: int = MAX_DEPTH) -> str | None:
    """Return why ``value`` is out of bounds, or None if it is a JSON value of Unicode text
    whose canonical text is at most ``max_bytes`` long and whose nesting depth is at most
    ``max_depth``.

    Out of bounds: any non-JSON type (set, tuple, bytes, arbitrary objects, ``dict``/``list``
    subclasses, a ``dict`` with a non-``str`` key, NaN, +-inf, an ``int`` too long to print), a
    string or key with a lone surrogate, a cycle, too deep, too long.  The walk is
    iterative and stops as soon as a bound is crossed, so its cost is bounded by ``max_bytes``.
    The size measured is that of the value's JSON text with every non-ASCII character escaped,
    an upper bound of the length of its canonical (RFC 8785) UTF-8 bytes.

    A flat object (most payloads and answers) is measured by its one C encoding instead of
    the walk (:func:`_flat_bounded`); anything else, and every refusal (so that it says the
    walk's reason), is the walk's.
    """
    if _flat_bounded(value, max_bytes, max_depth) is not None:
        return None
    return _walk(value, max_bytes, max_depth, unicode_only=True)


def bounded_json(value: object, max_bytes: int = MAX_BYTES,
                 max_depth: int = MAX_DEPTH) -> str | None:
    """:func:`canonical_json` of ``value`` when :func:`check_bounds` accepts it, else None --
    for untrusted input, a flat object measured and written by one C encoding.  Raises as
    :func:`canonical_json` does for a value within the bounds that it refuses."""
    flat = _flat_bounded(value, max_bytes, max_depth)
    if flat is not None:
        return flat
    if _walk(value, max_bytes, max_depth, unicode_only=True) is not None:
        return None
    return canonical_json(value)


def _flat_bounded(value: object, max_bytes: int, max_depth: int) -> str | None:
    """The canonical text of ``value`` when it is a flat object :func:`_flat_text` writes as
    ASCII text without DEL of at most ``max_bytes`` characters (and ``max_depth`` allows an
    object), else None.  That text is, character for character, what :func:`_walk` measures
    (the same escapes, with nothing non-ASCII to escape; a flat object has depth 1), so
    ``value`` is within the bounds; its cost is bounded by ``max_bytes`` as the walk's is."""
    if max_depth < 1:
        return None
    flat = _flat_text(value, max_bytes)
    if flat is not None and len(flat) <= max_bytes and flat.isascii() and "\x7f" not in flat:
        return flat
    return None


def _walk(value: object, max_bytes: int, max_depth: int, unicode_only: bool) -> str | None:
    size = 0
    # Each stack entry: (value, depth at which the value sits).
    stack: list[tuple[object, int]] = [(value, 0)]
    on_path: set[int] = set()
    # Post-order markers to keep cycle detection precise (a shared, non-cyclic sub-value is
    # fine; a container reachable from itself is not).
    exits: list[tuple[int, int]] = []  # (stack height when the container was entered, id)
    while stack:
        while exits and len(stack) <= exits[-1][0]:
            on_path.discard(exits.pop()[1])
        item, depth = stack.pop()
        try:
            text = _scalar_text(item, max_bytes - size, unicode_only)
        except ValueError as exc:
            return f"value out of bounds: {exc}"
        if text is not None:
            size += len(text)
        elif type(item) is dict or type(item) is list:
            if depth + 1 > max_depth:
                return f"value nested deeper than {max_depth} levels"
            if id(item) in on_path:
                return "value contains a cycle"
            on_path.add(id(item))
            exits.append((len(stack), id(item)))
            if type(item) is dict:
                size += 2 + max(len(item) - 1, 0)  # braces and commas
                for key, sub in item.items():
                    if not isinstance(key, str):
                        return f"object key {type(key).__name__} is not a string"
                    if len(key) > max_bytes - size:
                        return f"value larger than {max_bytes} bytes of canonical JSON"
                    if unicode_only and _SURROGATE.search(key):
                        return "an object key holds a lone surrogate: it is not Unicode text"
                    size += len(_ESCAPE_ASCII(key)) + 1  # key and colon
                    stack.append((sub, depth + 1))
            else:
                size += 2 + max(len(item) - 1, 0)  # brackets and commas
                for sub in item:
                    stack.append((sub, depth + 1))
        else:
            return f"value of type {type(item).__name__} is not JSON"
        if size > max_bytes:
            return f"value larger than {max_bytes} bytes of canonical JSON"
    return None


def canonical_json(value: object) -> str:
    """Serialise a JSON value canonically: RFC 8785 (JCS), returned as text (its UTF-8 bytes
    are the canonical bytes).

    Raises :class:`ValueError` for anything that is not a JSON value (see the module docstring)
    and for cycles.  It applies no size or depth bound of its own beyond
    ``sys.getrecursionlimit``; call :func:`check_bounds` first on untrusted input.
    """
    flat = _flat_text(value)  # as canonical_bytes, without encoding it and decoding it back
    if flat is not None:
        return flat
    return _rfc8785_bytes(value).decode("utf-8")


def _flat_text(value: object, room: int = 2**63) -> str | None:
    """The RFC 8785 text of a flat object of ASCII keys and string, exact-integer, boolean or
    null values (token headers and claims, most payloads and answers), or None for anything
    else.  On that domain ``json.dumps`` sorted and compact without ASCII escaping writes
    exactly what RFC 8785 prescribes: ASCII keys sort the same by code point as by UTF-16
    unit, strings take the same escapes (``\\b \\f \\n \\r \\t``, other controls as
    lowercase ``\\u00xx``), and integers within 2**53 print the same, as do ``true``,
    ``false`` and ``null``.  Everything else goes to the ``rfc8785`` package.

    None too, after a look at no more than ``room`` characters, when the text would be longer
    than ``room``: each member takes at least 5 (``"":0,``), and its key and string value
    their lengths at least."""
    if type(value) is not dict or 5 * len(value) > room:
        return None
    texts = []
    size = 0
    for key, item in value.items():
        if type(key) is not str:
            return None
        size += len(key) + (len(item) if type(item) is str else 0)
        if size > room or not key.isascii():
            return None
        if type(item) is str:
            texts.append(item)
        elif type(item) is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                return None
        elif item is not None and item is not True and item is not False:
            return None
    if not is_unicode("".join(texts)):  # joining makes no surrogate
        return None
    return _SORTED_COMPACT(value)


def canonical_bytes(value: object) -> bytes:
    """The RFC 8785 bytes of ``value`` (see :func:`canonical_json`)."""
    flat = _flat_text(value)
    if flat is not None:
        return flat.encode("utf-8")
    return _rfc8785_bytes(value)


def _rfc8785_bytes(value: object) -> bytes:
    """:func:`canonical_bytes` of a value that is no flat object :func:`_flat_text` writes."""
    problem = _walk(value, max_bytes=2**63, max_depth=2**31, unicode_only=True)
    if problem is not None:
        raise ValueError(problem)
    try:
        return rfc8785.dumps(value)  # type: ignore[arg-type]  # _walk proved it JSON
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(f"not canonicalisable JSON: {exc}") from None
    except RecursionError as exc:
        raise ValueError("value nested too deeply to serialise") from exc


_NOT_BMP_TEXT: Final = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")


class _NotFast(ValueError):
    """The value is outside the fast encoder's domain (the RFC 8785 path decides)."""


def _no_float(_text: str) -> object:
    raise _NotFast("a float: ECMAScript number formatting differs from repr")


def _safe_int(text: str) -> int:
    value = int(text)
    if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise _NotFast("an integer beyond 2**53 - 1")
    return value


_BUILT_PARSE: Final = json.JSONDecoder(parse_float=_no_float, parse_int=_safe_int).decode
"""``json.loads`` with hooks on number literals, its decoder built once."""


def built_json(value: object) -> str:
    """:func:`canonical_json` of a value the code built itself (a turn, a run's state, a
    result, claims), the same text, without the pure-Python RFC 8785 encoder and walk.

    A flat object of ASCII keys and string, exact-integer, boolean or null values is written
    as :func:`canonical_json` writes it, by one C encoding (see :func:`_flat_text`).  For
    anything else, the fast path is ``json.dumps`` sorted and compact without ASCII escaping,
    kept only when the text is proved to sit in the domain where that is RFC 8785: no
    character outside the Basic Multilingual Plane (so sorting keys by code point is sorting
    by UTF-16 unit) and no lone surrogate; no float (ECMAScript writes numbers differently
    from ``repr``) and no integer beyond 2**53 - 1, both found by parsing the text back in C
    with hooks on number literals; and the parsed value equal to ``value`` (so no tuple
    became a list, no non-string key a string).  On that domain the escapes agree too
    (``\\b \\f \\n \\r \\t``, other controls as lowercase ``\\u00xx``, nothing
    else).  Anything else --
    including everything :func:`canonical_json` refuses -- goes to :func:`canonical_json`,
    which returns or raises as it always does.  The one difference: an exact ``dict`` or
    ``list`` is what the code builds; a *subclass* of them, which :func:`canonical_json`
    refuses, is encoded here as its base type.  Untrusted input goes through
    :func:`check_bounds` first (which refuses subclasses) -- or straight to
    :func:`canonical_json`."""
    flat = _flat_text(value)
    if flat is not None:
        return flat
    try:
        text = _SORTED_COMPACT(value)  # a cycle: RecursionError, as deep as it goes
    except (TypeError, ValueError, RecursionError):
        return canonical_json(value)
    if _NOT_BMP_TEXT.search(text) is None:
        try:
            if _BUILT_PARSE(text) == value:
                return text
        except (_NotFast, RecursionError):
            pass
    return canonical_json(value)


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice."""


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str | bytes) -> object:
    """Parse JSON text strictly: duplicate object keys, ``NaN``/``Infinity``/``-Infinity``
    are refused with :class:`ValueError` (never "last one wins").  Bound the text's length and
    depth *before* calling it on hostile input (a deep text raises ``RecursionError``)."""
    return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_no_constant)


def digest(text: str) -> str:
    """SHA-256 of ``text`` encoded as UTF-8, as 64 lowercase hex digits."""
    data = text.encode("utf-8")
    return (_SHA256 if len(data) <= OPENSSL_FROM else hashlib.sha256)(data).hexdigest()


DIGEST_KEY_MIN: Final[int] = 32
"""Shortest accepted payload-digest secret, in bytes."""


class KeyedDigest:
    """:func:`keyed_digest` under one key: the standard library's HMAC-SHA256 set up with the
    key once (the key's padded inner and outer hash states), copied for each text -- one set up
    on :data:`_SHA256`, one on OpenSSL's for a text of more than :data:`OPENSSL_FROM` bytes."""

    __slots__ = ("_keyed", "_long")

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) < DIGEST_KEY_MIN:
            raise ValueError(f"a digest key is bytes of at least {DIGEST_KEY_MIN} bytes")
        self._keyed = hmac.new(key, digestmod=_SHA256)
        self._long = hmac.new(key, digestmod=hashlib.sha256)

    def __call__(self, text: str) -> str:
        data = text.encode("utf-8")
        mac = (self._keyed if len(data) <= OPENSSL_FROM else self._long).copy()
        mac.update(data)
        return mac.hexdigest()


def keyed_digest(key: bytes, text: str) -> str:
    """HMAC-SHA256 of ``text``'s UTF-8 bytes under ``key`` (at least :data:`DIGEST_KEY_MIN`
    bytes), as 64 lowercase hex digits.  Without the key, the digest says nothing about the
    text -- not even whether it equals a guess.  (:class:`KeyedDigest` keeps a key's set-up
    for many texts.)"""
    return KeyedDigest(key)(text)
