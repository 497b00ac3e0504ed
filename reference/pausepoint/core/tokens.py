"""Pause tokens: signed, strictly parsed, with a rotating key ring (clauses ``token.*``).

The token format is normative in ``spec/token-format.md`` (format 1: ``pp1.<header>.<claims>.
<signature>``, base64url parts of RFC 8785 canonical JSON, Ed25519 by default, the algorithm
bound to the key id in the verifier's ring, never read from the token), with test vectors in
``spec/vectors/tokens.json``.  This module is the reference implementation of that text:
:meth:`KeyRing.mint` produces it and :meth:`KeyRing.verify` checks it in the order the spec
gives, raising :class:`pausepoint.PausepointError` (``token_malformed`` or ``token_invalid``)
and nothing else, whatever the input.

Key rotation (clause ``token.rotation.drain``): :meth:`KeyRing.rotate` adds a key and makes it
the active (signing) key; older keys keep verifying.  :meth:`KeyRing.retire` removes a key only
when the caller's drain proof is exactly ``0``; the proof that also orders the retirement
against concurrent mints is the ledger's ``retire_key`` (see
:meth:`pausepoint.engine.service.PauseService.retire_key`).  The key ring imports no store; the
count is passed in.
"""

from __future__ import annotations

import binascii
import functools
import json
import json.scanner
import operator
import re
import secrets
import threading
import typing
from collections.abc import Iterable
from typing import ClassVar, Final, Literal

import attrs
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import BadSignatureError

from pausepoint.core.canonical import (
    MAX_SAFE_INTEGER,
    built_json,
    canonical_bytes,
    compact_encoder,
    is_unicode,
    loads_strict,
)
from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims

__all__ = [
    "FORMAT_VERSION",
    "MAX_TOKEN_LENGTH",
    "PREFIX",
    "TOKEN_TYPE",
    "Ed25519Key",
    "Ed25519VerifyKey",
    "HmacKey",
    "KeyEntry",
    "KeyRing",
    "SigningKey",
    "b64url_decode",
    "b64url_encode",
    "claims_json",
    "header_json",
    "header_part",
    "token_parts",
    "token_signature",
    "token_text",
]

MAX_TOKEN_LENGTH: Final[int] = 4096
"""Longest accepted token, in characters (tokens are ASCII, so also bytes)."""

PREFIX: Final[str] = "pp1"
TOKEN_TYPE: Final[str] = "pausepoint"
FORMAT_VERSION: Final[int] = 1

HMAC_MIN_SECRET: Final[int] = 32
"""Shortest HMAC secret accepted, in bytes (the SHA-256 output size)."""

_KID_RE: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_TO_STANDARD: Final = bytes.maketrans(b"-_", b"+/")
_TO_URL: Final = bytes.maketrans(b"+/", b"-_")
_B64URL: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_CANONICAL_LAST: Final = {
    partial: frozenset(_B64URL[value] for value in range(0, 64, 16 if partial == 2 else 4))
    for partial in (2, 3)}
"""By a base64url text's length mod 4 (2 or 3): the characters its last one may be, the
unused low bits zero (4 bits after 2 characters of a group, 2 after 3); a text of length 1
mod 4 is no encoding at all (strict decoding refuses it)."""

_PARSE: Final[ClauseId] = "token.parse.strict"
_KEY_ID: Final[ClauseId] = "token.key-id"
_INTEGRITY: Final[ClauseId] = "token.integrity"
_DRAIN: Final[ClauseId] = "token.rotation.drain"

_CLAIM_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in attrs.fields(Claims))
_CLAIM_TYPES: Final[dict[str, type]] = {
    name: typ for name, typ in typing.get_type_hints(Claims).items() if name in _CLAIM_FIELDS
}
if any(t not in (str, int) for t in _CLAIM_TYPES.values()):  # pragma: no cover - guards ports.py
    raise TypeError("tokens.py serialises only str and int claims; Claims changed shape")
_SORTED_CLAIM_KEYS: Final = sorted(_CLAIM_FIELDS)  # ASCII: code point order is RFC 8785's
_SORTED_CLAIM_TYPES: Final = tuple(_CLAIM_TYPES[name] for name in _SORTED_CLAIM_KEYS)
_INT_CLAIMS: Final = tuple(name for name, typ in _CLAIM_TYPES.items() if typ is int)
_SORTED_CLAIM_VALUES: Final = operator.attrgetter(*_SORTED_CLAIM_KEYS)
"""The claims' values, in their keys' sorted order, read in C."""
_STR_CLAIM_VALUES: Final = operator.attrgetter(
    *(name for name in _SORTED_CLAIM_KEYS if _CLAIM_TYPES[name] is str))
_INT_CLAIM_VALUES: Final = operator.attrgetter(*_INT_CLAIMS)


def _safe_ints(values: tuple[int, ...]) -> bool:
    """Whether every one of ``values`` (ints) is exact in JSON: within 2**53 - 1."""
    return min(values) >= -MAX_SAFE_INTEGER and max(values) <= MAX_SAFE_INTEGER


_SCAN: Final = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # as json does
"""``json.loads``'s own C scanner, called at offset 0: a JSON text with no whitespace around
it (the only kind a canonical text is) parses exactly as ``json.loads`` parses it."""

_ENCODE_COMPACT: Final = compact_encoder(sort_keys=False)
"""``json.dumps`` compact without ASCII escaping, keys in the value's order."""


# -- keys ------------------------------------------------------------------------------------

SIGNATURE_BYTES: Final = 64
"""An Ed25519 signature's length."""


def ed25519_sign(secret: bytes, data: bytes) -> bytes:
    """The Ed25519 signature of ``data`` (RFC 8032) under ``secret``, libsodium's 64-byte
    secret key (:func:`ed25519_secret`).  The keys' one signing primitive: libsodium's, which
    signs and verifies in about half the time OpenSSL's takes through ``cryptography``
    (``bench/bench_cycle.py`` times both verifies); ``cryptography`` keeps making, loading
    and exporting the keys."""
    return crypto_sign(data, secret)[:SIGNATURE_BYTES]


def ed25519_verify(public: bytes, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the Ed25519 signature of ``data`` under the raw 32-byte
    ``public`` key: libsodium's verify, strict as rule T6 asks (S < L, so no malleable twin of
    a signature verifies) -- and stricter where RFC 8032 leaves a choice: a key or an ``R``
    of small order, or a key not in its canonical encoding, verifies nothing.  An honest key
    never is one, so this refuses only forgeries."""
    if len(signature) != SIGNATURE_BYTES:
        return False
    try:
        crypto_sign_open(signature + data, public)
    except BadSignatureError:
        return False
    return True


def ed25519_secret(key: Ed25519PrivateKey) -> bytes:
    """libsodium's secret key for ``key``: its seed, then its public key."""
    return crypto_sign_seed_keypair(key.private_bytes_raw())[1]


def _check_kid(_inst: object, _attr: object, kid: str) -> None:
    if not isinstance(kid, str) or _KID_RE.fullmatch(kid) is None:
        raise ValueError(f"key id must be 1-64 characters of [A-Za-z0-9._:-], got {kid!r}")


def _check_private(_inst: object, _attr: object, key: Ed25519PrivateKey) -> None:
    if not isinstance(key, Ed25519PrivateKey):
        raise TypeError("private_key must be a cryptography Ed25519PrivateKey")


def _check_public(_inst: object, _attr: object, key: Ed25519PublicKey) -> None:
    if not isinstance(key, Ed25519PublicKey):
        raise TypeError("public_key must be a cryptography Ed25519PublicKey")


@attrs.frozen(eq=False)
class Ed25519Key:
    """An Ed25519 signing key (algorithm ``EdDSA``), the default.  Verifies with its public
    half only."""

    algorithm: ClassVar[Literal["EdDSA"]] = "EdDSA"

    kid: str = attrs.field(validator=_check_kid)
    private_key: Ed25519PrivateKey = attrs.field(repr=False, validator=_check_private)
    _public: Ed25519PublicKey = attrs.field(init=False, repr=False)
    _secret: bytes = attrs.field(init=False, repr=False)
    _public_raw: bytes = attrs.field(init=False, repr=False)

    @_public.default
    def _derive_public(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @_secret.default
    def _derive_secret(self) -> bytes:
        return ed25519_secret(self.private_key)

    @_public_raw.default
    def _derive_public_raw(self) -> bytes:
        return self._public.public_bytes_raw()

    @classmethod
    def generate(cls, kid: str) -> Ed25519Key:
        return cls(kid, Ed25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, kid: str, raw: bytes) -> Ed25519Key:
        """Load from the 32-byte raw private key (RFC 8032 seed)."""
        return cls(kid, Ed25519PrivateKey.from_private_bytes(raw))

    def verify_key(self) -> Ed25519VerifyKey:
        """The public, verify-only entry for this key (same key id)."""
        return Ed25519VerifyKey(self.kid, self._public)

    def sign(self, data: bytes) -> bytes:
        return ed25519_sign(self._secret, data)

    def verify_signature(self, data: bytes, signature: bytes) -> bool:
        return ed25519_verify(self._public_raw, data, signature)


@attrs.frozen(eq=False)
class Ed25519VerifyKey:
    """The public half of an Ed25519 key: verifies ``EdDSA`` tokens, cannot sign."""

    algorithm: ClassVar[Literal["EdDSA"]] = "EdDSA"

    kid: str = attrs.field(validator=_check_kid)
    public_key: Ed25519PublicKey = attrs.field(repr=False, validator=_check_public)
    _raw: bytes = attrs.field(init=False, repr=False)

    @_raw.default
    def _derive_raw(self) -> bytes:
        return self.public_key.public_bytes_raw()

    @classmethod
    def from_public_bytes(cls, kid: str, raw: bytes) -> Ed25519VerifyKey:
        """Load from the 32-byte raw public key."""
        return cls(kid, Ed25519PublicKey.from_public_bytes(raw))

    def public_bytes(self) -> bytes:
        return self._raw

    def verify_signature(self, data: bytes, signature: bytes) -> bool:
        return ed25519_verify(self._raw, data, signature)


def _check_secret(_inst: object, _attr: object, secret: bytes) -> None:
    if not isinstance(secret, bytes) or len(secret) < HMAC_MIN_SECRET:
        raise ValueError(f"HMAC secret must be bytes of at least {HMAC_MIN_SECRET} bytes")


@attrs.frozen(eq=False)
class HmacKey:
    """An HMAC-SHA256 key (algorithm ``HS256``) -- only on explicit choice: whoever can verify
    can also sign."""

    algorithm: ClassVar[Literal["HS256"]] = "HS256"

    kid: str = attrs.field(validator=_check_kid)
    secret: bytes = attrs.field(repr=False, validator=_check_secret)

    @classmethod
    def generate(cls, kid: str) -> HmacKey:
        return cls(kid, secrets.token_bytes(HMAC_MIN_SECRET))

    def sign(self, data: bytes) -> bytes:
        mac = hmac.HMAC(self.secret, hashes.SHA256())
        mac.update(data)
        return mac.finalize()

    def verify_signature(self, data: bytes, signature: bytes) -> bool:
        mac = hmac.HMAC(self.secret, hashes.SHA256())
        mac.update(data)
        try:
            mac.verify(signature)  # constant-time comparison
        except InvalidSignature:
            return False
        return True


SigningKey = Ed25519Key | HmacKey
"""A key that can sign (and verify)."""

KeyEntry = Ed25519Key | HmacKey | Ed25519VerifyKey
"""Anything a key ring holds.  The set is closed: no other algorithm (and no ``none``) exists."""

_SIGNING_TYPES: Final = (Ed25519Key, HmacKey)
_ENTRY_TYPES: Final = (Ed25519Key, HmacKey, Ed25519VerifyKey)


# -- encoding --------------------------------------------------------------------------------


def b64url_encode(raw: bytes) -> str:
    """base64url without padding: ``base64.urlsafe_b64encode`` (which is this translation of
    ``binascii``'s standard alphabet) without its two Python-level wrappers."""
    return binascii.b2a_base64(raw, newline=False).translate(_TO_URL).rstrip(b"=").decode(
        "ascii")


def b64url_decode(text: str) -> bytes:
    """Strict inverse of :func:`b64url_encode`: raises ValueError unless ``text`` is the
    canonical unpadded base64url encoding of the bytes returned -- non-empty, only
    ``[A-Za-z0-9_-]``, no padding, no whitespace, and no stray bits in the last character
    (the one text :func:`b64url_encode` writes for those bytes).

    The alphabet and padding are checked by ``binascii``'s strict mode (Python 3.11), in C.
    What strict decoding leaves free are the unused low bits of a last character that ends a
    partial group: 4 of them after 2 characters, 2 after 3.  The canonical text has them zero,
    so the last character is one of :data:`_CANONICAL_LAST`'s -- one set look-up, where
    encoding the bytes again to compare costs a pass over the whole text."""
    if not text or not text.isascii() or "+" in text or "/" in text or "=" in text:
        raise ValueError("not base64url text")
    partial = len(text) % 4
    padded = (text + "=" * (-partial % 4)).encode("ascii").translate(_TO_STANDARD)
    try:
        raw = binascii.a2b_base64(padded, strict_mode=True)
    except binascii.Error as exc:
        raise ValueError("not base64url text") from exc
    if partial and text[-1] not in _CANONICAL_LAST[partial]:
        raise ValueError("not the canonical base64url encoding")
    return raw


def header_json(kid: str) -> str:
    """The canonical header text for ``kid``."""
    return built_json({"kid": kid, "typ": TOKEN_TYPE, "v": FORMAT_VERSION})


@functools.lru_cache(maxsize=64)
def header_part(kid: str) -> str:
    """The base64url of ``kid``'s canonical header: a token's second part (computed once per
    key id)."""
    return b64url_encode(header_json(kid).encode("utf-8"))


@functools.lru_cache(maxsize=64)
def _kid_of_header(part: str) -> str | None:
    """The key id whose :func:`header_part` is exactly ``part``; None when ``part`` is no
    key's canonical header."""
    try:
        obj, _end = _SCAN(b64url_decode(part).decode("utf-8"), 0)
    except (ValueError, StopIteration):
        return None
    kid = obj.get("kid") if type(obj) is dict else None
    if type(kid) is not str or _KID_RE.fullmatch(kid) is None or header_part(kid) != part:
        return None
    return kid


_LAST_TOKEN: Final[list[tuple[object, str, object, str]]] = [(None, "", None, "")]
"""The token last minted or verified in this process, with its key id, its claims and its
signature part: one tuple, replaced as one.  A pause's token is minted and then split by its
issue to store it (:func:`token_signature`), a resume's verified and then split by its consume
(:func:`token_parts`) -- each time the same token and claims objects, which were then just
found to be exactly :func:`token_text` of that key id, claims and signature, so they are not
rebuilt and compared again."""


def _signing_input(header: str, claims: Claims) -> str:
    """``pp1.<header>.<claims>``: what is signed, ``header`` being :func:`header_part` of the
    signing key, and the claims' part the base64url of :func:`claims_json`; the token is this,
    a dot and the signature's base64url.  Raises TypeError or ValueError for claims
    :func:`claims_json` refuses."""
    part = b64url_encode(claims_json(claims).encode("utf-8"))
    return ".".join((PREFIX, header, part))


def token_text(kid: str, claims: Claims, signature: str) -> str:
    """The token :meth:`KeyRing.mint` writes for ``claims`` signed by the key ``kid`` with
    ``signature`` (the base64url of the signature bytes): its layout -- prefix, header by key
    id, canonical claims, signature -- is written here and in mint by the same helper,
    so a store may keep a token's signature alone and rebuild the token, byte for byte, from
    its key id and claims.  Raises TypeError or ValueError for claims mint refuses."""
    return _signing_input(header_part(kid), claims) + "." + signature


def token_signature(token: str, kid: str, claims: Claims) -> str | None:
    """The signature part of ``token`` when ``token`` is exactly :func:`token_text` of
    ``kid``, ``claims`` and that part; None otherwise (any other text, claims mint
    refuses)."""
    if type(token) is not str:
        return None
    last = _LAST_TOKEN[0]
    if last[0] is token and last[2] is claims and last[1] == kid:
        return last[3]
    signature = token[token.rfind(".") + 1:]
    try:
        again = token_text(kid, claims, signature)
    except (TypeError, ValueError):
        return None
    return signature if again == token else None


def token_parts(token: object, claims: Claims) -> tuple[str, str] | None:
    """``(kid, signature)`` such that ``token`` is exactly :func:`token_text` of ``kid``,
    ``claims`` and ``signature``; None when there are none (the token is not the one of
    these claims).  Checks nothing about the signature itself (:meth:`KeyRing.verify` does)."""
    if type(token) is not str:
        return None
    last = _LAST_TOKEN[0]
    if last[0] is token and last[2] is claims:
        return last[1], last[3]
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != PREFIX:
        return None
    kid = _kid_of_header(parts[1])
    if kid is None or token_signature(token, kid, claims) is None:
        return None
    return kid, parts[3]


def _check_claims(claims: Claims) -> dict[str, str | int]:
    if not isinstance(claims, Claims):
        raise TypeError("claims must be a pausepoint.core.ports.Claims")
    out: dict[str, str | int] = {}
    for name in _CLAIM_FIELDS:
        value: object = getattr(claims, name)
        want = _CLAIM_TYPES[name]
        if type(value) is not want or not isinstance(value, (str, int)):
            raise TypeError(f"claim {name} must be exactly {want.__name__}, "
                            f"got {type(value).__name__}")
        out[name] = value
    if claims.v != FORMAT_VERSION:
        raise ValueError(f"claims format version must be {FORMAT_VERSION}")
    return out


def claims_json(claims: Claims) -> str:
    """The canonical claims text of ``claims`` (every field; str and int values exactly).

    The claims as minted -- exactly :class:`Claims`, each value exactly its field's type,
    integers within 2**53 - 1, strings without a lone surrogate, format version 1 -- are
    written by one C encoding of their values in sorted key order: on that domain it is what
    :func:`~pausepoint.core.canonical.built_json` writes (see
    :func:`pausepoint.core.canonical.canonical_bytes`).  Anything else takes that path, which
    refuses what it must."""
    if type(claims) is Claims:
        values = _SORTED_CLAIM_VALUES(claims)
        if (tuple(map(type, values)) == _SORTED_CLAIM_TYPES and claims.v == FORMAT_VERSION
                and _safe_ints(_INT_CLAIM_VALUES(claims))
                and is_unicode("".join(_STR_CLAIM_VALUES(claims)))):
            return _ENCODE_COMPACT(dict(zip(_SORTED_CLAIM_KEYS, values, strict=True)))
    return built_json(_check_claims(claims))


def _malformed(why: str) -> PausepointError:
    return PausepointError(ErrorCode.TOKEN_MALFORMED, _PARSE, f"token malformed: {why}")


def _strict_object(raw: bytes, what: str) -> dict[str, object]:
    """Decode ``raw`` as the RFC 8785 canonical UTF-8 bytes of an object, or raise
    TOKEN_MALFORMED."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _malformed(f"{what} is not UTF-8 JSON") from None
    try:
        value = loads_strict(text)
    except (ValueError, RecursionError):
        raise _malformed(f"{what} is not JSON") from None
    if type(value) is not dict:
        raise _malformed(f"{what} is not a JSON object")
    try:
        again = canonical_bytes(value)
    except ValueError:
        raise _malformed(f"{what} is not canonical JSON") from None
    if again != raw:
        raise _malformed(f"{what} is not canonical JSON")
    return value


def _parse_claims(raw: bytes) -> Claims:
    obj = _strict_object(raw, "claims")
    if set(obj) != set(_CLAIM_FIELDS):
        raise _malformed("claims do not have exactly the expected keys")
    kwargs: dict[str, str | int] = {}
    for name in _CLAIM_FIELDS:
        value = obj[name]
        want = _CLAIM_TYPES[name]
        if type(value) is not want or not isinstance(value, (str, int)):
            raise _malformed(f"claim {name} is not {want.__name__}")
        kwargs[name] = value
    if kwargs["v"] != FORMAT_VERSION:
        raise _malformed(f"claims format version is not {FORMAT_VERSION}")
    return Claims(**kwargs)  # type: ignore[arg-type]


def _canonical_claims_pattern() -> re.Pattern[str]:
    """The claims objects whose RFC 8785 text needs no escape, as one pattern: the claims'
    keys, in sorted order, each with a value of its type -- a string of characters written as
    they are (no quote, backslash or control character: each of those would need an escape,
    and a text decoded from UTF-8 holds no lone surrogate), or an integer in its one canonical
    form (no sign on 0, no leading zero, no fraction or exponent; no more digits than
    2**53 - 1 has, so its range is checked on an int of bounded size) -- with nothing between
    or around them."""
    text = r'"([^"\\\x00-\x1f]*)"'
    integer = rf"(0|-?[1-9][0-9]{{0,{len(str(MAX_SAFE_INTEGER)) - 1}}})"
    members = ",".join(f'"{re.escape(name)}":' + (text if _CLAIM_TYPES[name] is str else integer)
                       for name in _SORTED_CLAIM_KEYS)
    return re.compile(r"\{" + members + r"\}")


_CANONICAL_CLAIMS: Final = _canonical_claims_pattern().fullmatch
_N_STR_CLAIMS: Final = sum(1 for name in _CLAIM_FIELDS if _CLAIM_TYPES[name] is str)
if any(_CLAIM_TYPES[name] is not str for name in _CLAIM_FIELDS[:_N_STR_CLAIMS]) or \
        _CLAIM_FIELDS[-1] != "v":  # pragma: no cover - guards ports.py
    raise TypeError("_fast_claims builds Claims from its strings, then its integers, the "
                    "format version last; Claims changed shape")
_IN_FIELD_ORDER: Final = operator.itemgetter(*(_SORTED_CLAIM_KEYS.index(name)
                                               for name in _CLAIM_FIELDS))
"""What :data:`_CANONICAL_CLAIMS` captures (in the keys' sorted order), in the order of
:class:`Claims`' fields -- its strings, then its integers -- in C."""


def _fast_claims(raw: bytes) -> Claims | None:
    """The claims of ``raw`` when it is, beyond doubt, the RFC 8785 bytes of a valid claims
    object; None when it may not be (the strict :func:`_parse_claims` then decides and says
    why).  One C match of the whole text (:func:`_canonical_claims_pattern`): a text it
    matches is the RFC 8785 text of the claims it captures -- exactly the claims' keys, in
    sorted order, no duplicate, no whitespace; each string the characters it holds, none of
    which RFC 8785 escapes; each integer in its canonical form -- so, once each integer is
    found exact in JSON (|n| <= 2**53 - 1) and the format version is this one, whatever this
    accepts, the strict path accepts too, with the same claims.  A claim whose text needs an
    escape (a quote, a backslash, a control character) is left to the strict path."""
    try:
        match = _CANONICAL_CLAIMS(raw.decode("utf-8"))
    except ValueError:  # not UTF-8: the strict path says so
        return None
    if match is None:
        return None
    values = _IN_FIELD_ORDER(match.groups())
    ints = tuple(map(int, values[_N_STR_CLAIMS:]))  # digits, by the pattern
    if not _safe_ints(ints) or ints[-1] != FORMAT_VERSION:
        return None
    return Claims(*values[:_N_STR_CLAIMS], *ints)


# -- key ring --------------------------------------------------------------------------------


class KeyRing:
    """Keys by key id, one of them active.  Implements the :class:`pausepoint.core.ports.Signer`
    port: :meth:`mint` signs with the active key, :meth:`verify` accepts any key in the ring.

    Thread-safe: mutations and the key lookups of ``mint``/``verify`` take one lock.
    """

    def __init__(self, active: SigningKey, others: Iterable[KeyEntry] = ()) -> None:
        if not isinstance(active, _SIGNING_TYPES):
            raise TypeError("the active key must be able to sign")
        self._lock = threading.Lock()
        self._keys: dict[str, KeyEntry] = {}
        self._headers: dict[str, str] = {}
        """kid -> the base64url of its canonical header, computed once per key."""
        self._by_header: dict[str, KeyEntry] = {}
        """That base64url -> its key: a token's header part found here is canonical."""
        self._add(active)
        for key in others:
            self._add(key)
        self._signing: tuple[SigningKey, str] = (active, self._headers[active.kid])
        """The active key and its header's base64url, replaced as one (one read in mint): the
        ring's only record of which key is active."""

    @classmethod
    def generate(cls, kid: str = "k1") -> KeyRing:
        """A ring with one fresh Ed25519 key."""
        return cls(Ed25519Key.generate(kid))

    def _add(self, key: KeyEntry) -> None:
        if not isinstance(key, _ENTRY_TYPES):
            raise TypeError(f"not a key ring entry: {type(key).__name__}")
        if key.kid in self._keys:
            raise PausepointError(
                ErrorCode.WIRING_INVALID, _KEY_ID,
                f"key id {key.kid!r} is already in the ring; a key id names exactly one key")
        self._keys[key.kid] = key
        header = header_part(key.kid)
        self._headers[key.kid] = header
        self._by_header[header] = key

    # -- administration ---------------------------------------------------------------------

    @property
    def active_kid(self) -> str:
        return self._signing[0].kid

    def kids(self) -> tuple[str, ...]:
        """Key ids in the ring, in the order they were added."""
        with self._lock:
            return tuple(self._keys)

    def __contains__(self, kid: object) -> bool:
        with self._lock:
            return kid in self._keys

    def algorithm(self, kid: str) -> str:
        """The algorithm bound to ``kid`` (``EdDSA`` or ``HS256``)."""
        with self._lock:
            key = self._keys.get(kid)
        if key is None:
            raise PausepointError(ErrorCode.KEY_UNKNOWN, _KEY_ID, f"no key {kid!r} in the ring")
        return key.algorithm

    def add(self, key: KeyEntry) -> None:
        """Add a key that verifies but does not become active (e.g. another signer's public
        key).  A key id already in the ring is refused with ``wiring_invalid``."""
        with self._lock:
            self._add(key)

    def rotate(self, new_key: SigningKey) -> None:
        """Add ``new_key`` and make it the active signing key; older keys keep verifying."""
        if not isinstance(new_key, _SIGNING_TYPES):
            raise TypeError("rotate needs a key that can sign")
        with self._lock:
            self._add(new_key)
            self._signing = (new_key, self._headers[new_key.kid])

    def retire(self, kid: str, outstanding: int) -> None:
        """Remove ``kid`` from the ring, given the drain proof ``outstanding`` -- the ledger's
        ``outstanding_for_key(kid)``.  Refused (clause ``token.rotation.drain``) with
        ``key_unknown`` for a kid not in the ring, and with ``key_not_drained`` for the active
        key (it keeps signing, so it is never drained: rotate first) or when ``outstanding`` is
        anything but the int ``0``.  After retiring, tokens signed by the key are
        ``token_invalid``."""
        with self._lock:
            if kid not in self._keys:
                raise PausepointError(ErrorCode.KEY_UNKNOWN, _DRAIN,
                                      f"no key {kid!r} in the ring to retire")
            if kid == self.active_kid:
                raise PausepointError(ErrorCode.KEY_NOT_DRAINED, _DRAIN,
                                      f"key {kid!r} is the active signing key; rotate to a new "
                                      "key and drain this one before retiring it")
            if type(outstanding) is not int or outstanding != 0:
                raise PausepointError(ErrorCode.KEY_NOT_DRAINED, _DRAIN,
                                      f"key {kid!r} still signs {outstanding!r} outstanding "
                                      "token(s); it can be retired only when the drain proof "
                                      "is 0")
            del self._keys[kid]
            del self._by_header[self._headers.pop(kid)]

    # -- Signer port ------------------------------------------------------------------------

    def mint(self, claims: Claims) -> tuple[str, str]:
        """Sign ``claims`` with the active key; return ``(token, kid)``.

        Claims with a wrongly typed field, a format version other than 1, or too long to fit
        :data:`MAX_TOKEN_LENGTH` are refused with ``token_malformed`` (clause
        ``token.parse.strict``) -- no token is minted that :meth:`verify` would refuse."""
        key, header = self._signing  # one attribute read: atomic, no lock needed
        try:
            signing_input = _signing_input(header, claims)
        except (TypeError, ValueError) as exc:
            raise PausepointError(ErrorCode.TOKEN_MALFORMED, _PARSE,
                                  f"claims cannot be minted: {exc}") from None
        signature = b64url_encode(key.sign(signing_input.encode("ascii")))
        token = signing_input + "." + signature
        if len(token) > MAX_TOKEN_LENGTH:
            raise PausepointError(ErrorCode.TOKEN_MALFORMED, _PARSE,
                                  f"claims too long: the token would exceed {MAX_TOKEN_LENGTH} "
                                  "characters")
        _LAST_TOKEN[0] = (token, key.kid, claims, signature)
        return token, key.kid

    def verify(self, token: object) -> Claims:
        """Return the claims of a token signed by a key in the ring.  Raises
        :class:`PausepointError` (``token_malformed`` or ``token_invalid``) and nothing else,
        whatever ``token`` is; see the module docstring for the exact checks and order."""
        try:
            return self._verify_fast(token) or self._verify(token)
        except PausepointError:
            raise
        except Exception:
            raise _malformed("unparseable") from None

    def _verify_fast(self, token: object) -> Claims | None:
        """The claims of a token this ring minted or could have minted, checked with one
        look-up of its header text among the keys' precomputed canonical headers (a header
        found there is canonical and names that key), C base64, the signature and
        :func:`_fast_claims`; None for anything else, which :meth:`_verify` then checks in the
        spec's order and refuses with its reason.  A bad signature is refused here at once:
        every check the spec orders before it has passed."""
        if type(token) is not str or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
            return None
        parts = token.split(".")
        if len(parts) != 4 or parts[0] != PREFIX:
            return None
        key = self._by_header.get(parts[1])  # one dict read: atomic, no lock needed
        if key is None:
            return None
        try:
            claims_raw = b64url_decode(parts[2])
            signature = b64url_decode(parts[3])
        except ValueError:
            return None
        if not key.verify_signature(token[: -len(parts[3]) - 1].encode("ascii"), signature):
            raise PausepointError(ErrorCode.TOKEN_INVALID, _INTEGRITY,
                                  "token invalid: the signature does not verify")
        claims = _fast_claims(claims_raw)
        if claims is not None:  # the claims' canonical text is claims_raw, whose part this is
            _LAST_TOKEN[0] = (token, key.kid, claims, parts[3])
        return claims

    def _verify(self, token: object) -> Claims:
        if not isinstance(token, str):
            raise _malformed(f"a token is text, not {type(token).__name__}")
        text = str.__str__(token)  # an exact str, whatever the subclass overrides
        if len(text) > MAX_TOKEN_LENGTH:
            raise _malformed(f"longer than {MAX_TOKEN_LENGTH} characters")
        if not text.isascii():
            raise _malformed("not ASCII")
        parts = text.split(".")
        if len(parts) != 4:
            raise _malformed("not four dot-separated parts")
        prefix, header_b64, claims_b64, sig_b64 = parts
        if prefix != PREFIX:
            raise _malformed(f"prefix is not {PREFIX!r}")
        try:
            header_raw = b64url_decode(header_b64)
            claims_raw = b64url_decode(claims_b64)
            signature = b64url_decode(sig_b64)
        except ValueError:
            raise _malformed("a part is not canonical unpadded base64url") from None

        header = _strict_object(header_raw, "header")
        if set(header) != {"kid", "typ", "v"}:
            raise _malformed("header keys are not exactly kid, typ, v")
        kid, typ, v = header["kid"], header["typ"], header["v"]
        if type(kid) is not str or typ != TOKEN_TYPE or type(typ) is not str \
                or type(v) is not int or v != FORMAT_VERSION:
            raise _malformed("header is not a pausepoint v1 header")

        with self._lock:
            key = self._keys.get(kid)
        if key is None:
            raise PausepointError(ErrorCode.TOKEN_INVALID, _KEY_ID,
                                  "token invalid: its key id names no key in the ring")
        signing_input = text[: len(prefix) + 1 + len(header_b64) + 1 + len(claims_b64)]
        if not key.verify_signature(signing_input.encode("ascii"), signature):
            raise PausepointError(ErrorCode.TOKEN_INVALID, _INTEGRITY,
                                  "token invalid: the signature does not verify")
        return _parse_claims(claims_raw)
