"""Hostile input: tokens, responses and payloads an attacker (or a broken client) could send.

A :class:`Target` is a pause service on a store holding a few *resumable* pauses -- so that a
valid token with a valid response would be accepted there and then.  :func:`fuzz_batch` throws
hostile inputs at it through the full ``PauseService.resume`` / ``pause`` path and counts what
came back.  The contract (clauses ``token.parse.strict``, ``token.integrity``, ``token.key-id``,
``resume.token.binds-one-pause``, ``resume.response.schema``, ``pause.payload.schema``,
``input.bounded``, ``lifecycle.refusal.no-change``):

* a hostile token is never accepted; the refusal is a :class:`PausepointError` with a code from
  the closed set, never another exception;
* a response or payload that is huge, too deeply nested, cyclic or of the wrong type gets a typed
  refusal (``response_invalid`` / ``payload_invalid``);
* none of it changes stored state -- checked by a digest of every row of the store, before and
  after each batch.

Token mutations (each named; the counts are reported per mutation): single characters replaced
(any character or base64url only), bits flipped inside a decoded part and re-encoded
canonically, truncation, extension, insertion, deletion, parts duplicated, parts swapped between
tokens, claims swapped between tokens under the original signature, re-signed with an attacker's
Ed25519 key under the ring's key id, re-signed with HMAC keyed by the public key (algorithm
confusion), an unknown key id, an ``alg`` header, non-canonical JSON or padding, oversized text,
non-ASCII and lone surrogates, bytes that are not UTF-8, wrong Python types, case and whitespace
changes, empty shapes, and tokens genuinely signed by the ring for claims no pause was issued
with (``orphan``).  A mutation that happens to reproduce a valid token is not counted.

Past the signature: the fuzzer holds the test signing key, so it also mints *validly signed*
tokens with hostile claims (another binding, expiry, interrupt id, key id, format version),
sends hostile responses with valid tokens, answers decided pauses (consumed, expired,
cancelled) again with other answers, presents valid tokens from another session, scope or run,
and races hostile resumes against a legitimate one on a fresh pause (exactly the legitimate one
may win; nothing else may change).  Every refusal is counted by the layer that stopped it
(:func:`layer_of`): ``parse`` (before the signature), ``signature`` (key id, signature),
``claims`` (claims parsed after a valid signature), ``binding`` (the pause the token names, its
binding, scope, authority), ``phase`` (the lifecycle: expiry, decided state, response), and
``store`` (it reached the ledger's conditional write).

``broken="normalizing-frontend"`` puts a deliberately broken front end before the service (it
strips whitespace from the token it was sent) to show the fuzzer catches an acceptance;
``broken="trusting-frontend"`` one that takes the session and scope from the token instead of
the request, caught only past the signature.

Verification is Ed25519, about 10k/s per core; most mutations fail parsing before the signature
check, which is where the throughput comes from -- nothing is skipped: every token goes through
``PauseService.resume``.
"""

from __future__ import annotations

import collections
import hashlib
import json
import random
import string
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pausepoint.core.canonical import canonical_json, digest
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import Phase
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import (
    MAX_TOKEN_LENGTH,
    Ed25519Key,
    KeyRing,
    b64url_decode,
    b64url_encode,
    header_json,
)
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.stores import StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec, load_key, state_digest

SESSION: Final = "fuzz-session"
SCOPE: Final = "fuzz-scope"
RESPONSE: Final[dict[str, Any]] = {"approved": True}
OTHER_KID: Final = "k0"
"""A second key in the target's ring: it verifies, so tokens it signs pass the signature."""
LAYERS: Final[tuple[str, ...]] = ("parse", "signature", "claims", "binding", "phase", "store")
BEYOND_SIGNATURE: Final[frozenset[str]] = frozenset(("claims", "binding", "phase", "store"))
TTL_MS: Final = 10**12
B64: Final = string.ascii_letters + string.digits + "-_"
JUNK: Final = B64 + ".=+/ \t\n\r\x00\x7f" + "é€\u200b\ufeff\udcff\U0001f600"


# -- the target ------------------------------------------------------------------------------


class _Probe:
    """The target's ledger, noting (per thread) whether a call reached the conditional write --
    the ``store`` layer."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def transition(self, *args: Any, **kwargs: Any) -> bool:
        self.local.reached = True
        return bool(self._inner.transition(*args, **kwargs))

    def take(self) -> bool:
        reached = bool(getattr(self.local, "reached", False))
        self.local.reached = False
        return reached


class Target:
    """A service with ``pauses`` resumable pauses, their valid tokens, and the store digest."""

    def __init__(self, spec: StoreSpec, key_path: str, *, pauses: int = 8, create: bool = True,
                 prefix: str = "fuzz", broken: str | None = None) -> None:
        self.spec = spec
        self.broken = broken
        self.store: StoreBundle = spec.open()
        self.key = load_key(key_path)
        self.other = Ed25519Key.from_private_bytes(
            OTHER_KID, hashlib.sha256(self.key.private_key.private_bytes_raw()).digest())
        self.ring = KeyRing(self.key, [self.other])
        self.clock = ManualClock(1_000)
        self.service: PauseService = compose(
            store=self.store, signer=self.ring, interactions=DEFAULT_INTERACTIONS,
            clock=self.clock, ttl_ms=TTL_MS,
            payload_key=hashlib.sha256(b"fuzz" + self.key.private_key.private_bytes_raw())
            .digest()).service
        self.probe = _Probe(self.service.ledger)
        self.service.ledger = self.probe
        self.request = ResumeRequest(session_id=SESSION, scope=SCOPE)
        self.prefix = prefix
        self.records = [self._pause(i, create) for i in range(pauses)]
        self.tokens = [r.token for r in self.records]
        self.decided = self._decided(create)
        self.valid = frozenset(self.tokens) | frozenset(t for t, _k in self.decided)
        self.races = 0
        self.worker = 0

    def _pause(self, i: int, create: bool) -> Any:
        iid = f"{self.prefix}-{i}"
        if not create:
            rec = self.store.ledger.get(iid)
            if rec is None:
                raise LookupError(f"no fuzz pause {iid} in {self.spec.describe()}")
            return rec
        run = f"{self.prefix}-run-{i}"
        self.clock.advance(1)  # every pause's claims differ in every field
        binding = PauseBinding(run_id=run, root_run_id=run, session_id=SESSION, thread_id=run,
                               scope=SCOPE)
        self.service.pause(binding=binding, name="approve", payload={"i": i}, interrupt_id=iid,
                           checkpoint_id=f"{run}@0")
        rec = self.service.record_turn(iid, canonical_json({"i": i}))
        assert rec.state.phase == Phase.RESUMABLE
        return rec

    def _decided(self, create: bool) -> list[tuple[str, str]]:
        """Pauses already decided -- consumed (with RESPONSE), cancelled, expired -- and their
        valid tokens: answering them again must change nothing."""
        out: list[tuple[str, str]] = []
        for kind in ("consumed", "cancelled", "expired"):
            for i in range(2):
                iid = f"{self.prefix}-{kind}-{i}"
                if create:
                    run = f"{self.prefix}-{kind}-run-{i}"
                    binding = PauseBinding(run_id=run, root_run_id=run, session_id=SESSION,
                                           thread_id=run, scope=SCOPE)
                    self.service.pause(binding=binding, name="approve", payload={"i": i},
                                       interrupt_id=iid, checkpoint_id=f"{run}@0",
                                       ttl_ms=1 if kind == "expired" else None)
                    self.service.record_turn(iid, canonical_json({"i": i}))
                    if kind == "consumed":
                        self.service.resume(self.ledger_row(iid).token, RESPONSE, self.request)
                    elif kind == "cancelled":
                        self.service.cancel_pause(iid)
                    else:
                        self.clock.advance(2)
                        self.service.expire(iid)
                out.append((self.ledger_row(iid).token, kind))
        return out

    def ledger_row(self, iid: str) -> Any:
        rec = self.store.ledger.get(iid)
        if rec is None:
            raise LookupError(f"no fuzz pause {iid} in {self.spec.describe()}")
        return rec

    def resume(self, token: object, response: object,
               request: ResumeRequest | None = None) -> object:
        """What a resume endpoint does with the token it was sent."""
        if self.broken == "normalizing-frontend" and isinstance(token, str):
            token = token.strip()  # BROKEN: a "helpful" front end that tidies its input
        if self.broken == "trusting-frontend" and isinstance(token, str):
            # BROKEN: a front end that takes who is answering from the token it was sent
            try:
                claims = json.loads(b64url_decode(token.split(".")[2]))
                request = ResumeRequest(session_id=claims["session_id"], scope=claims["scope"])
            except (ValueError, IndexError, KeyError, TypeError):
                pass
        return self.service.resume(token, response, request or self.request)

    def digest(self) -> str:
        return state_digest(self.store)

    def race_run(self, n: int) -> str:
        """The run of this worker's ``n``-th race round (:func:`race_round`)."""
        return f"{self.prefix}-w{self.worker}-race-{n}"

    def quiet_digest(self, busy: str | None = None) -> str:
        """The state digest over the rows hostile input must leave as they were: every row but
        those that mention ``busy`` (a race round's own pause) and those of the other workers'
        race rounds, which on a shared store run while this worker fuzzes (their legitimate
        resumes change their own rows: counted as a change, they were a false finding of
        ``--jobs 2`` on SQLite)."""
        races, own = f"{self.prefix}-w", self.race_run(0)[:-1]

        def kept(row: object) -> bool:
            text = json.dumps(row, default=str)
            return ((races not in text or own in text)
                    and (busy is None or busy not in text))
        return state_digest(self.store, kept)

    def close(self) -> None:
        self.store.close()


# -- mutation context ------------------------------------------------------------------------


def _hmac(secret: bytes, data: bytes) -> bytes:
    mac = hmac.HMAC(secret, hashes.SHA256())
    mac.update(data)
    return mac.finalize()


def _sign(header: str, claims: str, sign: Callable[[bytes], bytes]) -> str:
    signing_input = "pp1." + b64url_encode(header.encode()) + "." + b64url_encode(claims.encode())
    return signing_input + "." + b64url_encode(sign(signing_input.encode()))


@attrs.define
class Context:
    """What the mutators draw from: valid tokens, their parts and claims, attacker keys,
    ring-signed orphans and precomputed big values."""

    tokens: list[str]
    parts: list[list[str]]
    claims: list[dict[str, Any]]
    attacker: Ed25519PrivateKey
    public_raw: bytes
    kid: str
    orphans: list[str]
    big: list[str]
    forged: dict[str, list[str]] = attrs.Factory(dict)
    decided: list[tuple[str, str]] = attrs.Factory(list)
    signed: dict[str, list[str]] = attrs.Factory(dict)


def make_context(target: Target, rng: random.Random) -> Context:
    tokens = list(target.tokens)
    parts = [t.split(".") for t in tokens]
    claims = [json.loads(b64url_decode(p[2])) for p in parts]
    kid = target.ring.active_kid
    public_raw = target.key.verify_key().public_bytes()  # for the algorithm-confusion forgery
    orphans: list[str] = []
    for i, c in enumerate(claims):  # genuinely signed by the ring, for no issued pause
        for change in ({"interrupt_id": f"{c['interrupt_id']}-never-issued"},
                       {"issued_at": c["issued_at"] + 1}, {"scope": "other-scope"},
                       {"expires_at": c["expires_at"] + 1}, {"run_id": f"other-run-{i}"}):
            token, _kid = target.ring.mint(Claims(**{**c, **change}))
            orphans.append(token)
    big = [rng.choice(tokens) + "A" * (MAX_TOKEN_LENGTH + 1 - 500),
           "A" * (MAX_TOKEN_LENGTH + 1), "pp1." + "A" * 100_000, "." * 5000,
           "pp1." + "\u00e9" * 5000, "x" * 1_000_000]
    ctx = Context(tokens, parts, claims, Ed25519PrivateKey.generate(), public_raw, kid,
                  orphans, big)
    # Signing is the attacker's cost, not the verifier's: forge a pool once, draw from it.
    ctx.forged = {name: [str(_SIGNED[name](rng, ctx)) for _ in range(FORGED_POOL)]
                  for name in _SIGNED}
    ctx.decided = list(target.decided)
    ctx.signed = {name: [make(rng, ctx, target) for _ in range(FORGED_POOL)]
                  for name, make in _PAST_SIGNATURE.items()}
    return ctx


# -- past the signature: validly signed hostile claims ---------------------------------------


@attrs.frozen
class Attempt:
    """A resume attempt: a token with the response and request it is sent with."""

    token: object
    response: object = attrs.field(factory=lambda: dict(RESPONSE))
    request: ResumeRequest | None = None


def _signed(target: Target, claims: dict[str, Any], kid: str = "k1",
            key: Ed25519Key | None = None) -> str:
    """Claims text signed by a key of the target's ring -- a signature that verifies."""
    return _sign(header_json(kid), canonical_json(claims), (key or target.key).sign)


_BINDING_FIELDS: Final = ("run_id", "root_run_id", "session_id", "thread_id", "checkpoint_id",
                          "scope", "name", "tool_call_id", "payload_digest")


def _signed_binding(rng: random.Random, ctx: Context, target: Target) -> str:
    c = dict(ctx.claims[_pick(rng, ctx)])
    field = rng.choice(_BINDING_FIELDS)
    other = ctx.claims[_pick(rng, ctx)][field]
    c[field] = rng.choice((other, f"{c[field]}x", "", "attacker", "pausepoint.reconcile",
                           "a\x00b", "é" * 3))
    return _signed(target, c)


def _signed_expiry(rng: random.Random, ctx: Context, target: Target) -> str:
    c = dict(ctx.claims[_pick(rng, ctx)])
    field = rng.choice(("expires_at", "issued_at"))
    c[field] = rng.choice((0, -1, 1, c[field] + 1, c[field] - 1, 2**53 - 1, -(2**53 - 1),
                           c["issued_at"], c["expires_at"]))
    return _signed(target, c)


def _signed_id(rng: random.Random, ctx: Context, target: Target) -> str:
    c = dict(ctx.claims[_pick(rng, ctx)])
    decided = rng.choice(ctx.decided)[0] if ctx.decided else c["interrupt_id"]
    c["interrupt_id"] = rng.choice((
        ctx.claims[_pick(rng, ctx)]["interrupt_id"], f"{c['interrupt_id']}-x", "", "a\x00",
        json.loads(b64url_decode(decided.split(".")[2]))["interrupt_id"], "x" * 300))
    return _signed(target, c)


def _signed_version(rng: random.Random, ctx: Context, target: Target) -> str:
    c: dict[str, Any] = dict(ctx.claims[_pick(rng, ctx)])
    how = rng.randrange(6)
    if how == 0:
        c["v"] = rng.choice((0, 2, -1, 2**53 - 1))
    elif how == 1:
        c["v"] = rng.choice((True, 1.5, "1"))
    elif how == 2:
        c["admin"] = True
    elif how == 3:
        del c[rng.choice(sorted(c))]
    elif how == 4:
        c[rng.choice(("issued_at", "expires_at"))] = rng.choice((True, "1", None, 1.5))
    else:
        c[rng.choice(_BINDING_FIELDS)] = rng.choice((1, None, ["x"], {"x": 1}))
    return _signed(target, c)


def _signed_other_key(rng: random.Random, ctx: Context, target: Target) -> str:
    c = dict(ctx.claims[_pick(rng, ctx)])
    if rng.random() < 0.5:  # genuinely signed by the ring's other key: a different token
        return _signed(target, c, OTHER_KID, target.other)
    return _signed(target, c, OTHER_KID)  # signed by k1, named k0: the signature fails


_PAST_SIGNATURE: Final[dict[str, Callable[[random.Random, Context, Target], str]]] = {
    "signed-binding": _signed_binding, "signed-expiry": _signed_expiry,
    "signed-id": _signed_id, "signed-version": _signed_version,
    "signed-other-key": _signed_other_key,
}


def _pool(name: str) -> Mutator:
    def draw(rng: random.Random, ctx: Context) -> object:
        return rng.choice(ctx.signed[name])
    return draw


HOSTILE_RESPONSES: Final[tuple[object, ...]] = (
    {"approved": "false"}, {"approved": "true"}, {"approved": 0}, {"approved": 1},
    {"approved": None}, {"approved": [True]}, {"approved": {"v": True}}, {"note": "yes"}, {},
    [RESPONSE], "yes", 1, None, True, {"approved": True, "n": 2**60},
    {"approved": True, "x": float("nan")}, {"approved": True, "x": "\ud800"},
    {"approved": True, 1: 2}, {"approved": True, "x": (1, 2)}, {"approved": b"1"},
)


def m_response(rng: random.Random, ctx: Context) -> object:
    return Attempt(ctx.tokens[_pick(rng, ctx)], rng.choice(HOSTILE_RESPONSES))


def m_decided(rng: random.Random, ctx: Context) -> object:
    token, kind = rng.choice(ctx.decided)
    answer: object = rng.choice(({"approved": False}, {"approved": True, "n": rng.randrange(9)},
                                 {"approved": "true"}) if kind == "consumed"
                                else ({"approved": True}, {"approved": False}))
    return Attempt(token, answer)


def m_request(rng: random.Random, ctx: Context) -> object:
    request = rng.choice((
        ResumeRequest(session_id="attacker-session", scope=SCOPE),
        ResumeRequest(session_id=SESSION, scope="attacker-scope"),
        ResumeRequest(session_id=SESSION, scope=SCOPE, run_id="other-run"),
        ResumeRequest(session_id=SESSION, scope=SCOPE, root_run_id="other-root"),
        ResumeRequest(session_id="", scope=""),
    ))
    return Attempt(ctx.tokens[_pick(rng, ctx)], request=request)


# -- mutators --------------------------------------------------------------------------------

Mutator = Callable[[random.Random, Context], object]


def _pick(rng: random.Random, ctx: Context) -> int:
    return rng.randrange(len(ctx.tokens))


def m_char(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    i = rng.randrange(len(t))
    return t[:i] + rng.choice(JUNK) + t[i + 1:]


def m_b64char(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    i = rng.randrange(len(t))
    return t[:i] + rng.choice(B64) + t[i + 1:]


def m_bitflip(rng: random.Random, ctx: Context) -> object:
    parts = list(ctx.parts[_pick(rng, ctx)])
    k = rng.randrange(1, 4)
    raw = bytearray(b64url_decode(parts[k]))
    i = rng.randrange(len(raw))
    raw[i] ^= 1 << rng.randrange(8)
    parts[k] = b64url_encode(bytes(raw))
    return ".".join(parts)


def m_truncate(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    return t[:rng.randrange(len(t))]


def m_extend(rng: random.Random, ctx: Context) -> object:
    alphabet = rng.choice((B64, JUNK, "A", "="))
    return ctx.tokens[_pick(rng, ctx)] + "".join(
        rng.choice(alphabet) for _ in range(rng.randint(1, 64)))


def m_insert(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    i = rng.randrange(len(t) + 1)
    return t[:i] + "".join(rng.choice(JUNK) for _ in range(rng.randint(1, 8))) + t[i:]


def m_delete(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    i = rng.randrange(len(t))
    return t[:i] + t[i + rng.randint(1, 16):]


def m_dup_part(rng: random.Random, ctx: Context) -> object:
    parts = list(ctx.parts[_pick(rng, ctx)])
    k = rng.randrange(len(parts))
    parts.insert(k, parts[k])
    return ".".join(parts)


def m_swap_parts(rng: random.Random, ctx: Context) -> object:
    n = len(ctx.parts)
    a, b = rng.randrange(n), rng.randrange(n)
    if a == b:
        b = (a + 1) % n
    pa, pb = ctx.parts[a], ctx.parts[b]
    k = rng.randrange(2, 4)  # claims or signature (every header of one ring's key is the same)
    return ".".join(pb[j] if j == k else pa[j] for j in range(4))


def m_swap_claims(rng: random.Random, ctx: Context) -> object:
    n = len(ctx.claims)
    a = rng.randrange(n)
    b = (a + rng.randrange(1, n)) % n if n > 1 else a
    claims = dict(ctx.claims[a])
    field = rng.choice(("interrupt_id", "run_id", "root_run_id", "checkpoint_id",
                        "payload_digest", "thread_id", "issued_at"))
    claims[field] = ctx.claims[b][field] if b != a else f"{claims[field]}x"
    parts = list(ctx.parts[a])
    parts[2] = b64url_encode(canonical_json(claims).encode())
    return ".".join(parts)


def _forged_claims(rng: random.Random, ctx: Context) -> str:
    claims = dict(ctx.claims[_pick(rng, ctx)])
    change = rng.choice(("none", "scope", "expires_at", "interrupt_id", "session_id"))
    if change == "scope":
        claims["scope"] = "attacker-scope"
    elif change == "expires_at":
        claims["expires_at"] = claims["expires_at"] + 10**9
    elif change == "interrupt_id":
        claims["interrupt_id"] = ctx.claims[_pick(rng, ctx)]["interrupt_id"]
    elif change == "session_id":
        claims["session_id"] = "attacker-session"
    return canonical_json(claims)


def _resign_attacker(rng: random.Random, ctx: Context) -> object:
    return _sign(header_json(ctx.kid), _forged_claims(rng, ctx), ctx.attacker.sign)


def m_resign_attacker(rng: random.Random, ctx: Context) -> object:
    return rng.choice(ctx.forged["resign-attacker"])


def m_resign_hmac(rng: random.Random, ctx: Context) -> object:
    return _sign(header_json(ctx.kid), _forged_claims(rng, ctx),
                 lambda data: _hmac(ctx.public_raw, data))


def _unknown_kid(rng: random.Random, ctx: Context) -> object:
    kid = rng.choice(("k2", "K1", "k1 ", "", "none", "k1.old", "x" * 65))
    header = canonical_json({"kid": kid, "typ": "pausepoint", "v": 1})
    return _sign(header, _forged_claims(rng, ctx), ctx.attacker.sign)


def m_unknown_kid(rng: random.Random, ctx: Context) -> object:
    return rng.choice(ctx.forged["unknown-kid"])


FORGED_POOL: Final = 256
_SIGNED: Final[dict[str, Mutator]] = {"resign-attacker": _resign_attacker,
                                      "unknown-kid": _unknown_kid}


def m_alg_header(rng: random.Random, ctx: Context) -> object:
    alg = rng.choice(("none", "HS256", "EdDSA", "RS256", ""))
    header = canonical_json({"alg": alg, "kid": ctx.kid, "typ": "pausepoint", "v": 1})
    parts = list(ctx.parts[_pick(rng, ctx)])
    parts[1] = b64url_encode(header.encode())
    if rng.random() < 0.5:
        parts[3] = "" if alg == "none" else b64url_encode(
            _hmac(ctx.public_raw, ".".join(parts[:3]).encode()))
    return ".".join(parts)


def m_noncanonical(rng: random.Random, ctx: Context) -> object:
    i = _pick(rng, ctx)
    parts = list(ctx.parts[i])
    how = rng.choice(("spaces", "order", "pad", "std-b64", "header-v"))
    if how == "spaces":
        parts[2] = b64url_encode(json.dumps(ctx.claims[i], sort_keys=True).encode())
    elif how == "order":
        parts[2] = b64url_encode(json.dumps(dict(reversed(ctx.claims[i].items())),
                                            separators=(",", ":")).encode())
    elif how == "pad":
        k = rng.randrange(1, 4)
        parts[k] = parts[k] + "=" * rng.randint(1, 2)
    elif how == "std-b64":
        k = rng.randrange(1, 4)
        parts[k] = parts[k].replace("-", "+").replace("_", "/") + "+/"
    else:
        header = json.dumps({"kid": ctx.kid, "typ": "pausepoint", "v": rng.choice(
            (True, 1.0, "1", 2, 0))}, sort_keys=True, separators=(",", ":"))
        parts[1] = b64url_encode(header.encode())
    return ".".join(parts)


def m_oversized(rng: random.Random, ctx: Context) -> object:
    return rng.choice(ctx.big)


def m_non_ascii(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    i = rng.randrange(len(t))
    return t[:i] + rng.choice(("é", "\u0130", "\udcff", "\ud800", "\U0001f600", "\u200b",
                               "\uff41", "\x80")) + t[i:]


def m_bytes(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    choice = rng.randrange(5)
    if choice == 0:
        return t.encode()
    if choice == 1:
        return bytearray(t.encode())
    if choice == 2:
        return memoryview(t.encode())
    if choice == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 600)))
    return b"\xff\xfe" + t.encode() + b"\xc3\x28"


_WRONG_TYPES: Final[tuple[object, ...]] = (
    None, 0, 1, -1, 10**40, 1.5, float("nan"), True, [], {}, (), set(), frozenset(), object(),
    Ellipsis, NotImplemented, 1j, range(3), str, type, b"",
)


def m_wrong_type(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    return rng.choice((*_WRONG_TYPES, [t], {"token": t}, (t,), t.split(".")))


def m_case(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    return rng.choice((t.upper(), t.lower(), t.swapcase(), "PP1" + t[3:], "pp2" + t[3:],
                       "pp0" + t[3:], "pp" + t[3:]))


def m_whitespace(rng: random.Random, ctx: Context) -> object:
    t = ctx.tokens[_pick(rng, ctx)]
    ws = rng.choice((" ", "\n", "\t", "\r\n", "\x00", "\u00a0"))
    return rng.choice((ws + t, t + ws, t.replace(".", ws + ".", 1), t.replace(".", "." + ws, 1)))


def m_empty(rng: random.Random, ctx: Context) -> object:
    return rng.choice(("", ".", "...", "....", "pp1", "pp1.", "pp1...", "pp1..", "pp1.a.b.c",
                       "pp1.e30.e30.", "pp1.e30.e30.AA", "pp1.\x00.\x00.\x00"))


def m_orphan(rng: random.Random, ctx: Context) -> object:
    return rng.choice(ctx.orphans)


MUTATORS: Final[dict[str, Mutator]] = {
    "char": m_char, "b64char": m_b64char, "bitflip": m_bitflip, "truncate": m_truncate,
    "extend": m_extend, "insert": m_insert, "delete": m_delete, "dup-part": m_dup_part,
    "swap-parts": m_swap_parts, "swap-claims": m_swap_claims,
    "resign-attacker": m_resign_attacker, "resign-hmac": m_resign_hmac,
    "unknown-kid": m_unknown_kid, "alg-header": m_alg_header, "noncanonical": m_noncanonical,
    "oversized": m_oversized, "non-ascii": m_non_ascii, "bytes": m_bytes,
    "wrong-type": m_wrong_type, "case": m_case, "whitespace": m_whitespace, "empty": m_empty,
    "orphan": m_orphan,
    **{name: _pool(name) for name in _PAST_SIGNATURE},
    "response": m_response, "decided": m_decided, "request": m_request,
}
MUTATOR_NAMES: Final[tuple[str, ...]] = tuple(MUTATORS)
WEIGHTS: Final[dict[str, int]] = dict.fromkeys(
    (*_PAST_SIGNATURE, "response", "decided", "request"), 2)
"""Mutations that get past the signature are drawn twice as often as the others (the
parser's mutations are cheap and plentiful; the deeper layers need the share)."""


# -- hostile responses and payloads ----------------------------------------------------------


def _nested(depth: int, kind: str) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def _cyclic() -> object:
    d: dict[str, object] = {}
    d["self"] = d
    return d


def hostile_values() -> list[tuple[str, object]]:
    """Values no interaction whose schema is a JSON object accepts (too big, too deep, cyclic,
    not JSON, not Unicode text, or not an object), named."""
    many = {f"k{i}": i for i in range(12_000)}
    return [
        ("deep-list", _nested(33, "list")), ("deep-dict", {"a": _nested(40, "dict")}),
        ("very-deep", {"a": _nested(100_000, "list")}),
        ("huge-string", {"text": "x" * 70_000}), ("huge-dict", many),
        ("huge-list", {"items": list(range(20_000))}), ("cyclic", _cyclic()),
        ("nan", {"x": float("nan")}), ("inf", {"x": float("inf")}),
        ("huge-int", {"x": 10**5000}), ("bytes-value", {"x": b"\xff"}),
        ("set-value", {"x": {1, 2}}), ("tuple-value", {"x": (1, 2)}),
        ("object-value", {"x": object()}), ("int-key", {1: "a"}), ("none-key", {None: 1}),
        ("tuple-key", {(1, 2): 3}), ("list", [1, 2]), ("string", "yes"), ("int", 1),
        ("none", None), ("bool", True), ("float", 1.5), ("bytes", b"{}"),
        ("non-utf8-bytes", b"\xff\xfe"),
        ("dict-subclass", collections.OrderedDict(a=1)),
        ("lone-surrogate", {"x": "\ud800"}), ("surrogate-key", {"\udfff": 1}),
    ]


# -- running ---------------------------------------------------------------------------------


@attrs.define
class Tally:
    """Counts of one fuzzing session (mergeable across workers)."""

    tried: int = 0
    skipped_valid: int = 0
    accepted: int = 0
    exceptions: int = 0
    state_changes: int = 0
    digests: int = 0
    refused: collections.Counter[str] = attrs.Factory(collections.Counter)
    by_mutator: collections.Counter[str] = attrs.Factory(collections.Counter)
    responses: int = 0
    payloads: int = 0
    value_refusals: collections.Counter[str] = attrs.Factory(collections.Counter)
    layers: collections.Counter[str] = attrs.Factory(collections.Counter)
    """Hostile tokens by the layer that stopped them (:data:`LAYERS`)."""
    races: int = 0
    raced: int = 0
    """Race rounds, and the hostile resumes raced in them against a legitimate one."""
    race_layers: collections.Counter[str] = attrs.Factory(collections.Counter)
    findings: list[str] = attrs.Factory(list)

    def merge(self, other: Tally) -> None:
        for f in ("tried", "skipped_valid", "accepted", "exceptions", "state_changes",
                  "digests", "responses", "payloads", "races", "raced"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.refused.update(other.refused)
        self.by_mutator.update(other.by_mutator)
        self.value_refusals.update(other.value_refusals)
        self.layers.update(other.layers)
        self.race_layers.update(other.race_layers)
        self.findings.extend(other.findings[: max(0, 50 - len(self.findings))])

    @property
    def violations(self) -> int:
        return self.accepted + self.exceptions + self.state_changes

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Tally:
        counters = ("refused", "by_mutator", "value_refusals", "layers", "race_layers")
        t = cls(**{k: v for k, v in obj.items() if k not in counters})
        for name in counters:
            getattr(t, name).update(obj[name])
        return t

    @property
    def beyond_signature(self) -> int:
        """Hostile tokens stopped after the signature check (or at no check: accepted)."""
        return sum(self.layers[layer] for layer in BEYOND_SIGNATURE) + self.accepted


def _describe(token: object) -> str:
    text = repr(token)
    return text if len(text) < 160 else text[:150] + f"...({len(text)} chars)"


_BINDING_CODES: Final = frozenset((ErrorCode.PAUSE_UNKNOWN, ErrorCode.BINDING_MISMATCH,
                                   ErrorCode.SCOPE_MISMATCH, ErrorCode.RESPONDER_UNAUTHORIZED))
_STORE_CODES: Final = frozenset((ErrorCode.STORE_UNAVAILABLE, ErrorCode.STORE_CORRUPT,
                                 ErrorCode.INPUT_INVALID))


def layer_of(exc: PausepointError, reached_store: bool = False) -> str:
    """The layer that stopped a resume (one of :data:`LAYERS`)."""
    if reached_store or exc.code in _STORE_CODES:
        return "store"
    if exc.code is ErrorCode.TOKEN_MALFORMED:  # claims are parsed only once the signature holds
        return "claims" if exc.message.startswith("token malformed: claim") else "parse"
    if exc.code is ErrorCode.TOKEN_INVALID:
        return "binding" if exc.clause == "resume.token.binds-one-pause" else "signature"
    if exc.code in _BINDING_CODES:
        return "binding"
    return "phase"


def _resume(target: Target, attempt: object) -> object:
    if isinstance(attempt, Attempt):
        return target.resume(attempt.token, attempt.response, attempt.request)
    return target.resume(attempt, RESPONSE)


def try_token(target: Target, token: object, tally: Tally, name: str) -> None:
    tally.tried += 1
    tally.by_mutator[name] += 1
    target.probe.take()
    try:
        _resume(target, token)
    except PausepointError as exc:
        tally.refused[exc.code.value] += 1
        tally.layers[layer_of(exc, target.probe.take())] += 1
        return
    except Exception as exc:
        tally.exceptions += 1
        tally.findings.append(f"{name}: {type(exc).__name__}: {exc} for {_describe(token)}")
        return
    tally.accepted += 1
    tally.findings.append(f"{name}: ACCEPTED {_describe(token)}")


def try_value(target: Target, what: str, name: str, value: object, tally: Tally,
              serial: int) -> None:
    """A hostile response with a valid token, or a hostile payload for a new pause."""
    want = "response_invalid" if what == "response" else "payload_invalid"
    try:
        if what == "response":
            tally.responses += 1
            target.resume(target.tokens[serial % len(target.tokens)], value)
        else:
            tally.payloads += 1
            run = f"{target.prefix}-hostile-{serial}"
            binding = PauseBinding(run_id=run, root_run_id=run, session_id=SESSION,
                                   thread_id=run, scope=SCOPE)
            target.service.pause(binding=binding, name="approve", payload=value,
                                 interrupt_id=f"{run}/0", checkpoint_id=f"{run}@0")
    except PausepointError as exc:
        tally.value_refusals[f"{what}:{exc.code.value}"] += 1
        if exc.code.value != want:
            tally.findings.append(f"{what} {name}: refused {exc.code.value}, not {want}")
        return
    except Exception as exc:
        tally.exceptions += 1
        tally.findings.append(f"{what} {name}: {type(exc).__name__}: {exc}")
        return
    tally.accepted += 1
    tally.findings.append(f"{what} {name}: ACCEPTED")


def fuzz_batch(target: Target, ctx: Context, rng: random.Random, count: int, tally: Tally,
               values: Sequence[tuple[str, object]] = (), value_every: int = 500,
               names: Sequence[str] = MUTATOR_NAMES, race_rounds: int = 0) -> None:
    """``count`` hostile tokens (plus a hostile response or payload every ``value_every``),
    then compare the store's digest with the one taken before; then ``race_rounds`` races
    (:func:`race_round`)."""
    before = target.quiet_digest()
    mutators = [(n, MUTATORS[n]) for n in names for _ in range(WEIGHTS.get(n, 1))]
    done = 0
    while done < count:
        name, mutate = mutators[rng.randrange(len(mutators))]
        token = mutate(rng, ctx)
        if type(token) is str and token in target.valid:
            tally.skipped_valid += 1
            continue
        try_token(target, token, tally, name)
        done += 1
        if values and tally.tried % value_every == 0:
            vname, value = values[rng.randrange(len(values))]
            what = "response" if rng.random() < 0.5 else "payload"
            try_value(target, what, vname, value, tally, tally.tried)
    tally.digests += 1
    if target.quiet_digest() != before:
        tally.state_changes += 1
        tally.findings.append("the store's state changed during a batch of hostile input")
    if race_rounds:
        for _ in range(race_rounds):
            race_round(target, ctx, rng, tally)


def race_round(target: Target, ctx: Context, rng: random.Random, tally: Tally) -> None:
    """A fresh resumable pause, then one legitimate resume raced, at the same moment, against
    hostile ones: a mutated token, a hostile response, another session, validly signed claims
    of another binding, the same claims signed by the ring's other key.  Exactly the legitimate
    one may win; the pause ends consumed with its answer; no other row changes."""
    n = target.races
    target.races += 1
    run = target.race_run(n)
    iid = f"{run}/0"
    binding = PauseBinding(run_id=run, root_run_id=run, session_id=SESSION, thread_id=run,
                           scope=SCOPE)
    target.service.pause(binding=binding, name="approve", payload={"race": n},
                         interrupt_id=iid, checkpoint_id=f"{run}@0")
    rec = target.service.record_turn(iid, canonical_json({"race": n}))
    before = target.quiet_digest(busy=iid)
    claims = json.loads(b64url_decode(rec.token.split(".")[2]))
    i = rng.randrange(len(rec.token))
    mutated = rec.token[:i] + rng.choice(B64) + rec.token[i + 1:]
    attempts: list[tuple[str, Attempt]] = [
        ("race-legit", Attempt(rec.token)),
        ("race-mutated", Attempt(mutated if mutated != rec.token else rec.token + "A")),
        ("race-response", Attempt(rec.token, rng.choice(HOSTILE_RESPONSES))),
        ("race-request", Attempt(rec.token, request=ResumeRequest(session_id="attacker",
                                                                  scope=SCOPE))),
        ("race-signed", Attempt(_signed(target, {**claims, "scope": "attacker-scope"}))),
        ("race-other-key", Attempt(_signed(target, claims, OTHER_KID, target.other))),
    ]
    results: list[tuple[str, Any]] = [("none", None)] * len(attempts)
    barrier = threading.Barrier(len(attempts))

    def go(k: int) -> None:
        target.probe.take()
        try:
            barrier.wait(timeout=30)
            results[k] = ("ok", _resume(target, attempts[k][1]))
        except PausepointError as exc:
            results[k] = ("refused", (exc, target.probe.take()))
        except BaseException as exc:
            results[k] = ("exception", exc)

    threads = [threading.Thread(target=go, args=(k,)) for k in range(len(attempts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tally.races += 1
    for (name, _attempt), (kind, out) in zip(attempts, results, strict=True):
        legit = name == "race-legit"
        if not legit:
            tally.raced += 1
            tally.by_mutator[name] += 1
        if kind == "refused":
            exc, reached = out
            if legit:
                tally.findings.append(f"race: the legitimate resume was refused: {exc}")
                tally.exceptions += 1
            else:
                tally.race_layers[layer_of(exc, reached)] += 1
        elif kind == "ok":
            if legit:
                tally.race_layers["store"] += 0  # the legitimate winner: not a hostile input
            else:
                tally.accepted += 1
                tally.findings.append(f"race: {name} ACCEPTED")
        else:
            tally.exceptions += 1
            tally.findings.append(f"race: {name}: {type(out).__name__}: {out}")
    final = target.store.ledger.get(iid)
    want = digest(canonical_json(RESPONSE))
    if final is None or final.state.phase != Phase.CONSUMED \
            or final.state.response_digest != want:
        tally.state_changes += 1
        tally.findings.append(f"race: {iid} did not end consumed with the legitimate answer")
    tally.digests += 1
    if target.quiet_digest(busy=iid) != before:
        tally.state_changes += 1
        tally.findings.append(f"race: rows other than {iid} changed during the race")


def sanity_accept(target: Target) -> bool:
    """After fuzzing, a valid token with a valid response IS accepted: the target was live."""
    out = target.service.resume(target.tokens[0], RESPONSE, target.request)
    return not out.replayed and out.record.state.phase == Phase.CONSUMED


def seed_for(seed: int, worker: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{worker}".encode()).digest()[:8], "big")


# -- sessions: in one process, or spread over worker processes --------------------------------


@attrs.frozen
class Plan:
    """One fuzzing session: ``count`` hostile tokens against ``spec``.  With a memory store each
    worker fuzzes a target of its own; a durable store is set up once and shared."""

    count: int
    seed: int
    spec: StoreSpec
    key_path: str
    batch: int = 10_000
    race_every: int = 2_000
    """One race round (:func:`race_round`) per this many hostile tokens."""
    pauses: int = 8
    prefix: str = "fuzz"
    broken: str | None = None

    @property
    def shared(self) -> bool:
        return self.spec.kind != "memory"

    def to_json(self) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["spec"] = self.spec.to_json()
        return d

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Plan:
        return cls(**{**obj, "spec": StoreSpec.from_json(obj["spec"])})


def fuzz_share(plan: Plan, worker: int, share: int,
               progress: Callable[[int], None] | None = None) -> tuple[Tally, bool | None]:
    """Fuzz ``share`` tokens as worker ``worker``; return the tally and, for a private (memory)
    target, whether a valid answer was accepted afterwards (None for a shared store: the
    caller checks it once every worker is done)."""
    target = Target(plan.spec, plan.key_path, pauses=plan.pauses, create=not plan.shared,
                    prefix=plan.prefix, broken=plan.broken)
    try:
        rng = random.Random(seed_for(plan.seed, worker))
        ctx = make_context(target, rng)
        values = hostile_values()
        tally = Tally()
        target.worker = worker
        left = share
        while left > 0:
            n = min(plan.batch, left)
            fuzz_batch(target, ctx, rng, n, tally, values,
                       race_rounds=max(1, n // plan.race_every))
            left -= n
            if progress is not None:
                progress(n)
        live = None if plan.shared else sanity_accept(target)
        return tally, live
    finally:
        target.close()


def _worker(plan_json: dict[str, Any], worker: int, share: int, out: Any) -> None:
    plan = Plan.from_json(plan_json)
    try:
        tally, live = fuzz_share(plan, worker, share, lambda n: out.put(("progress", n)))
        out.put(("done", tally.to_json(), live))
    except BaseException:
        import traceback

        out.put(("failed", traceback.format_exc(), None))
        raise


def shares(count: int, jobs: int) -> list[int]:
    base, extra = divmod(count, jobs)
    return [base + (1 if i < extra else 0) for i in range(jobs)]


def run_fuzz(plan: Plan, jobs: int = 1,
             progress: Callable[[int], None] | None = None) -> tuple[Tally, bool]:
    """Run a session; return the merged tally and whether the target was live (a valid answer
    was accepted after the hostile ones).  ``jobs=1`` runs in this process."""
    if plan.shared:  # one set of pauses in the shared store, created before anyone fuzzes
        Target(plan.spec, plan.key_path, pauses=plan.pauses, create=True,
               prefix=plan.prefix).close()
    total = Tally()
    lives: list[bool] = []
    if jobs <= 1:
        tally, live = fuzz_share(plan, 0, plan.count, progress)
        total.merge(tally)
        if live is not None:
            lives.append(live)
    else:
        import multiprocessing
        import queue

        ctx = multiprocessing.get_context("spawn")
        out: Any = ctx.Queue()
        procs = [ctx.Process(target=_worker, args=(plan.to_json(), i, n, out), daemon=True)
                 for i, n in enumerate(shares(plan.count, jobs))]
        for p in procs:
            p.start()
        finished = 0
        while finished < len(procs):
            try:
                msg = out.get(timeout=1.0)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise RuntimeError("a fuzz worker died") from None
                continue
            if msg[0] == "progress":
                if progress is not None:
                    progress(int(msg[1]))
            elif msg[0] == "done":
                finished += 1
                total.merge(Tally.from_json(msg[1]))
                if msg[2] is not None:
                    lives.append(bool(msg[2]))
            else:
                raise RuntimeError(f"a fuzz worker failed:\n{msg[1]}")
        for p in procs:
            p.join(timeout=30)
    if plan.shared:
        target = Target(plan.spec, plan.key_path, pauses=plan.pauses, create=False,
                        prefix=plan.prefix)
        try:
            lives.append(sanity_accept(target))
        finally:
            target.close()
    return total, bool(lives) and all(lives)
