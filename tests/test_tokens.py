"""Tests of pause tokens, the key ring and the canonical-JSON helpers.

Each test cites the clause ids it exercises in its docstring; assertions on a refusal's clause
go through :func:`pausepoint.core.clauses.clause`, which fails on an id not in the catalogue.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pausepoint.core.canonical import (
    MAX_BYTES,
    MAX_DEPTH,
    bounded_json,
    built_json,
    canonical_json,
    check_bounds,
    digest,
    keyed_digest,
)
from pausepoint.core.clauses import ErrorCode, clause
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims, Signer
from pausepoint.core.tokens import (
    MAX_TOKEN_LENGTH,
    Ed25519Key,
    Ed25519VerifyKey,
    HmacKey,
    KeyRing,
    SigningKey,
    _fast_claims,
    _parse_claims,
    b64url_decode,
    b64url_encode,
    claims_json,
    ed25519_verify,
    header_json,
    header_part,
    token_parts,
    token_signature,
    token_text,
)

REFUSED = (ErrorCode.TOKEN_MALFORMED, ErrorCode.TOKEN_INVALID)
PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def make_claims(**over: Any) -> Claims:
    base: dict[str, Any] = dict(
        interrupt_id="int-1", run_id="run-1", root_run_id="root-1", session_id="sess-1",
        thread_id="thr-1", checkpoint_id="ckpt-1", scope="tenant-a", name="approve_refund",
        tool_call_id="call-1", payload_digest=digest('{"amount":12}'), issued_at=1_000,
        expires_at=61_000)
    base.update(over)
    return Claims(**base)


def refusal(ring: KeyRing, token: object) -> PausepointError:
    """Verify ``token`` and return the refusal; fail the test if it was accepted or if anything
    other than a PausepointError escaped."""
    try:
        got = ring.verify(token)  # type: ignore[arg-type]
    except PausepointError as err:
        assert err.code in REFUSED, err
        return err
    pytest.fail(f"token accepted: {token!r} -> {got!r}")


def b64json(text: str) -> str:
    return b64url_encode(text.encode("utf-8"))


def forge(key: SigningKey, header: str, claims: str, prefix: str = "pp1") -> str:
    """A token with arbitrary header/claims text, correctly signed by ``key`` -- so a refusal
    can only come from the parsing rules, not from the signature."""
    signing_input = f"{prefix}.{b64json(header)}.{b64json(claims)}"
    return signing_input + "." + b64url_encode(key.sign(signing_input.encode("ascii")))


@pytest.fixture
def key() -> Ed25519Key:
    return Ed25519Key.generate("k1")


@pytest.fixture
def ring(key: Ed25519Key) -> KeyRing:
    return KeyRing(key)


@pytest.fixture
def token(ring: KeyRing) -> str:
    return ring.mint(make_claims())[0]


# -- round trip and format -------------------------------------------------------------------


def test_round_trip_token_claims(ring: KeyRing) -> None:
    """token.claims, resume.token.authentic: every claim survives mint -> verify."""
    claims = make_claims(scope="é/ünïcødé \u2028 \"q\"", name="x" * 50, issued_at=-5,
                         expires_at=2**53 - 1)
    token, kid = ring.mint(claims)
    assert kid == "k1"
    assert ring.verify(token) == claims


def test_keyring_is_a_signer(ring: KeyRing) -> None:
    """resume.token.authentic: the key ring implements the Signer port."""
    assert isinstance(ring, Signer)


def test_format_is_documented_layout(ring: KeyRing, token: str) -> None:
    """token.parse.strict, token.claims, token.key-id: pp1.<header>.<claims>.<sig>, canonical
    JSON header with kid/typ/v and no algorithm, claims with every Claims field."""
    prefix, h, c, s = token.split(".")
    assert prefix == "pp1"
    assert "=" not in token
    header = b64url_decode(h).decode("ascii")
    assert header == '{"kid":"k1","typ":"pausepoint","v":1}' == header_json("k1")
    body = b64url_decode(c).decode("ascii")
    assert body == claims_json(make_claims())
    assert set(json.loads(body)) == {f.name for f in attrs.fields(Claims)} == {
        "interrupt_id", "run_id", "root_run_id", "session_id", "thread_id", "checkpoint_id",
        "scope", "name", "tool_call_id", "payload_digest", "issued_at", "expires_at", "v"}
    assert json.loads(body)["v"] == 1
    assert len(b64url_decode(s)) == 64  # Ed25519


def test_claims_text_is_canonical() -> None:
    """token.claims: RFC 8785 (JCS) -- sorted keys, no whitespace, UTF-8 not escaped."""
    text = claims_json(make_claims(scope="é"))
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False)
    assert '"scope":"é"' in text
    assert " " not in text and "\\u00e9" not in text


def test_concurrent_mint_and_rotate() -> None:
    """token.rotation.drain, token.key-id: minting while rotating always yields tokens that
    verify and name the key that signed them."""
    import threading

    ring = KeyRing(Ed25519Key.generate("r0"))
    minted: list[tuple[str, str]] = []
    lock = threading.Lock()

    def minter() -> None:
        for _ in range(50):
            pair = ring.mint(make_claims())
            with lock:
                minted.append(pair)

    threads = [threading.Thread(target=minter) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(1, 20):
        ring.rotate(Ed25519Key.generate(f"r{i}"))
    for t in threads:
        t.join()
    assert len(minted) == 200
    for token, kid in minted:
        assert ring.verify(token) == make_claims()
        assert json.loads(b64url_decode(token.split(".")[1]))["kid"] == kid


def test_hmac_round_trip() -> None:
    """token.integrity, token.parse.strict: HS256 keys sign and verify; 32-byte tags."""
    ring = KeyRing(HmacKey.generate("h1"))
    token, kid = ring.mint(make_claims())
    assert kid == "h1" and ring.algorithm("h1") == "HS256"
    assert ring.verify(token) == make_claims()
    assert len(b64url_decode(token.split(".")[3])) == 32
    other = KeyRing(HmacKey.generate("h1"))
    assert refusal(other, token).code is ErrorCode.TOKEN_INVALID


def test_hmac_secret_too_short_refused() -> None:
    """token.integrity: a weak HMAC secret cannot be configured."""
    with pytest.raises(ValueError):
        HmacKey("h1", b"short")
    HmacKey("h1", b"x" * 32)


def test_algorithms_bound_to_key_type(key: Ed25519Key) -> None:
    """token.parse.strict: one fixed algorithm per key."""
    assert key.algorithm == "EdDSA"
    assert key.verify_key().algorithm == "EdDSA"
    assert HmacKey.generate("h").algorithm == "HS256"


def test_secrets_not_in_repr(key: Ed25519Key) -> None:
    """token.integrity: key material never leaks through repr."""
    h = HmacKey("h1", b"S" * 32)
    assert "SSSS" not in repr(h)
    raw = key.private_key.private_bytes_raw()
    assert raw.hex() not in repr(key) and str(raw) not in repr(key)


@pytest.mark.parametrize("kid", ["", "a b", "é", "x" * 65, "a.b\n"])
def test_bad_kid_refused(kid: str) -> None:
    """token.key-id: key ids are short, printable ASCII."""
    with pytest.raises(ValueError):
        Ed25519Key.generate(kid)


# -- verify-only public keys -----------------------------------------------------------------


def test_public_key_only_verifies(key: Ed25519Key, token: str) -> None:
    """token.key-id, token.integrity: a ring holding only the public half (loaded by kid from
    raw bytes) verifies Ed25519 tokens."""
    raw = key.verify_key().public_bytes()
    verifier = KeyRing(Ed25519Key.generate("local"),
                       [Ed25519VerifyKey.from_public_bytes("k1", raw)])
    assert verifier.verify(token) == make_claims()
    other = KeyRing(Ed25519Key.generate("local"),
                    [Ed25519Key.generate("k1").verify_key()])
    assert refusal(other, token).clause == clause("token.integrity")


SMALL_ORDER_KEYS = {
    "identity": bytes([1]) + bytes(31),
    "order 2": bytes([0xEC]) + b"\xff" * 30 + b"\x7f",
}
"""Public keys of small order: for the identity, a signature of R = the identity and S = 0
satisfies RFC 8032's cofactorless equation for *every* message (OpenSSL's verify, through
``cryptography``, accepts it)."""


@pytest.mark.parametrize("point", sorted(SMALL_ORDER_KEYS))
def test_small_order_key_verifies_nothing(point: str) -> None:
    """token.integrity: a verify-only key of small order loaded into a ring verifies no token,
    not even one whose signature satisfies the verification equation for any message -- the
    ring's Ed25519 verify refuses a small-order key and R, as libsodium's does."""
    weak = SMALL_ORDER_KEYS[point]
    ring = KeyRing(Ed25519Key.generate("local"), [Ed25519VerifyKey.from_public_bytes("weak", weak)])
    signing_input = f"pp1.{header_part('weak')}.{b64json(claims_json(make_claims()))}"
    for signature in (bytes([1]) + bytes(63), weak + bytes(32)):
        token = signing_input + "." + b64url_encode(signature)
        assert refusal(ring, token).clause == clause("token.integrity")
        assert not ed25519_verify(weak, signing_input.encode("ascii"), signature)


def test_verify_key_cannot_become_active(key: Ed25519Key) -> None:
    """token.rotation.drain: only a signing key can be rotated in."""
    ring = KeyRing(key)
    with pytest.raises(TypeError):
        ring.rotate(Ed25519Key.generate("k2").verify_key())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        KeyRing(key.verify_key())  # type: ignore[arg-type]
    assert ring.active_kid == "k1" and ring.kids() == ("k1",)


def test_private_bytes_reload(key: Ed25519Key, token: str) -> None:
    """token.key-id: a key reloaded from its raw private bytes verifies its old tokens."""
    again = Ed25519Key.from_private_bytes("k1", key.private_key.private_bytes_raw())
    assert KeyRing(again).verify(token) == make_claims()


# -- rotation and drain ----------------------------------------------------------------------


def test_rotation_new_key_signs_old_still_verifies(ring: KeyRing, token: str) -> None:
    """token.rotation.drain, token.key-id"""
    ring.rotate(Ed25519Key.generate("k2"))
    assert ring.active_kid == "k2"
    assert ring.kids() == ("k1", "k2")
    new_token, kid = ring.mint(make_claims(interrupt_id="int-2"))
    assert kid == "k2"
    assert json.loads(b64url_decode(new_token.split(".")[1]))["kid"] == "k2"
    assert ring.verify(new_token).interrupt_id == "int-2"
    assert ring.verify(token) == make_claims()


def test_rotation_to_hmac_and_back(ring: KeyRing, token: str) -> None:
    """token.rotation.drain, token.parse.strict: mixed algorithms, each bound to its kid."""
    ring.rotate(HmacKey.generate("h2"))
    t2, kid = ring.mint(make_claims())
    assert kid == "h2" and ring.algorithm("h2") == "HS256" and ring.algorithm("k1") == "EdDSA"
    assert ring.verify(t2) == ring.verify(token) == make_claims()


def test_duplicate_kid_refused(ring: KeyRing) -> None:
    """token.key-id: a kid names exactly one key; it cannot be replaced in place."""
    with pytest.raises(PausepointError) as exc:
        ring.rotate(Ed25519Key.generate("k1"))
    assert exc.value.code is ErrorCode.WIRING_INVALID
    with pytest.raises(PausepointError):
        ring.add(HmacKey.generate("k1"))
    assert ring.kids() == ("k1",)


@pytest.mark.parametrize("outstanding", [1, 7, -1, True, 0.0, None, "0"])
def test_retire_refused_while_not_drained(ring: KeyRing, token: str, outstanding: Any) -> None:
    """token.rotation.drain: refused with key_not_drained unless the drain proof is int 0."""
    ring.rotate(Ed25519Key.generate("k2"))
    with pytest.raises(PausepointError) as exc:
        ring.retire("k1", outstanding)
    assert exc.value.code is ErrorCode.KEY_NOT_DRAINED
    assert exc.value.clause == clause("token.rotation.drain")
    assert ring.kids() == ("k1", "k2")
    assert ring.verify(token) == make_claims()


def test_retire_at_zero_then_old_tokens_invalid(ring: KeyRing, token: str) -> None:
    """token.rotation.drain, token.key-id: retired at 0; its tokens become token_invalid."""
    ring.rotate(Ed25519Key.generate("k2"))
    new_token, _ = ring.mint(make_claims())
    ring.retire("k1", 0)
    assert ring.kids() == ("k2",)
    err = refusal(ring, token)
    assert err.code is ErrorCode.TOKEN_INVALID
    assert err.clause == clause("token.key-id")
    assert ring.verify(new_token) == make_claims()


def test_retire_active_key_refused(ring: KeyRing) -> None:
    """token.rotation.drain: the active key keeps signing, so it is never drained."""
    with pytest.raises(PausepointError) as exc:
        ring.retire("k1", 0)
    assert exc.value.code is ErrorCode.KEY_NOT_DRAINED
    assert exc.value.clause == clause("token.rotation.drain")
    assert ring.kids() == ("k1",)


def test_retire_unknown_kid_refused(ring: KeyRing) -> None:
    """token.rotation.drain"""
    with pytest.raises(PausepointError) as exc:
        ring.retire("nope", 0)
    assert exc.value.code is ErrorCode.KEY_UNKNOWN
    assert exc.value.clause == clause("token.rotation.drain")


def test_algorithm_of_unknown_kid(ring: KeyRing) -> None:
    """token.key-id"""
    with pytest.raises(PausepointError) as exc:
        ring.algorithm("nope")
    assert exc.value.code is ErrorCode.KEY_UNKNOWN


# -- integrity: altered bytes ----------------------------------------------------------------


@pytest.mark.parametrize("make_key", [Ed25519Key.generate, HmacKey.generate])
def test_every_flipped_byte_refused(make_key: Any) -> None:
    """token.integrity, token.parse.strict: flipping any bit of any character of a real token
    (seven masks keep it ASCII) is refused, never accepted."""
    ring = KeyRing(make_key("k1"))
    token, _ = ring.mint(make_claims())
    tried = 0
    for i, ch in enumerate(token):
        for bit in range(7):
            altered = token[:i] + chr(ord(ch) ^ (1 << bit)) + token[i + 1:]
            assert altered != token
            refusal(ring, altered)
            tried += 1
    assert tried == 7 * len(token)


def test_every_position_replaced_by_every_alphabet_char(ring: KeyRing, token: str) -> None:
    """token.integrity: every other base64url/dot character at every position is refused."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.="
    for i, ch in enumerate(token):
        for repl in alphabet:
            if repl != ch:
                refusal(ring, token[:i] + repl + token[i + 1:])


def test_trailing_bits_alias_refused(ring: KeyRing) -> None:
    """token.parse.strict, token.integrity: a part re-encoded with non-zero unused trailing
    bits decodes to the same bytes but is refused as non-canonical."""
    token, _ = ring.mint(make_claims())
    parts = token.split(".")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    aliased_any = False
    for index in (1, 2, 3):
        part = parts[index]
        if len(part) % 4 == 0:
            continue
        for alias in alphabet:
            if alias == part[-1]:
                continue
            candidate = part[:-1] + alias
            padded = candidate + "=" * (-len(candidate) % 4)
            if base64.urlsafe_b64decode(padded) == base64.urlsafe_b64decode(
                    part + "=" * (-len(part) % 4)):
                aliased_any = True
                forged = ".".join(parts[:index] + [candidate] + parts[index + 1:])
                err = refusal(ring, forged)
                assert err.code is ErrorCode.TOKEN_MALFORMED
                assert err.clause == clause("token.parse.strict")
    assert aliased_any  # the test really exercised an alias


def test_splitting_the_token_just_minted_or_verified(ring: KeyRing) -> None:
    """token.integrity: token_parts and token_signature answer, for the token this process
    just minted or verified, what rebuilding the token answers -- and nothing for other
    claims, another key id, or an equal token that is not the one minted (it is rebuilt)."""
    claims = make_claims()
    token, kid = ring.mint(claims)
    signature = token.rsplit(".", 1)[1]
    other = make_claims(scope="elsewhere")
    assert token_signature(token, kid, claims) == signature
    assert token_parts(token, claims) == (kid, signature)
    assert token_parts(token, other) is None
    assert token_signature(token, kid, other) is None
    assert token_signature(token, "k-other", claims) is None
    copy = "".join(list(token))
    assert copy == token and copy is not token
    assert token_parts(copy, claims) == (kid, signature)
    assert token_parts(copy[:-2] + "AA", claims) == (kid, copy[:-2].rsplit(".", 1)[1] + "AA")
    verified = ring.verify(token)
    assert verified == claims and verified is not claims
    assert token_parts(token, verified) == (kid, signature)
    assert token_parts(token, other) is None
    assert token_parts(token, claims) == (kid, signature)


def test_b64url_decode_accepts_exactly_the_canonical_texts() -> None:
    """token.parse.strict: of every text of up to 3 characters over the alphabet and the
    characters around it, b64url_decode accepts exactly what b64url_encode writes for some
    bytes (of 1 or 2), and returns those bytes: a last character with stray low bits, a
    length of 1 mod 4, padding or another alphabet's character is refused."""
    canonical = {b64url_encode(bytes(raw)): bytes(raw)
                 for raw in itertools.chain(itertools.product(range(256), repeat=1),
                                            itertools.product(range(256), repeat=2))}
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. \n\x00\u00e9"
    accepted = 0
    for length in range(4):
        for picked in itertools.product(chars, repeat=length):
            text = "".join(picked)
            try:
                raw = b64url_decode(text)
            except ValueError:
                assert text not in canonical
                continue
            assert canonical.get(text) == raw
            accepted += 1
    assert accepted == len(canonical)


@given(st.binary(min_size=1, max_size=80))
def test_b64url_round_trip_and_every_alias_refused(raw: bytes) -> None:
    """token.parse.strict: a longer text decodes back to its bytes, and every other last
    character -- an alias that sets stray bits, or other bytes' encoding -- never decodes to
    the same bytes."""
    text = b64url_encode(raw)
    assert b64url_decode(text) == raw
    for other in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_":
        if other == text[-1]:
            continue
        try:
            assert b64url_decode(text[:-1] + other) != raw
        except ValueError:
            pass


def test_truncation_at_every_length(ring: KeyRing, token: str) -> None:
    """token.integrity, token.parse.strict"""
    for n in range(len(token)):
        refusal(ring, token[:n])
    for n in range(1, len(token)):
        refusal(ring, token[n:])


@pytest.mark.parametrize("suffix", ["A", "AA", "AAA", "AAAA", "=", "==", ".", ".A", "\n", " ",
                                    ".pp1", "\x00"])
def test_extension_refused(ring: KeyRing, token: str, suffix: str) -> None:
    """token.integrity, token.parse.strict"""
    refusal(ring, token + suffix)
    refusal(ring, suffix + token)


def test_padding_inside_parts_refused(ring: KeyRing, token: str) -> None:
    """token.parse.strict: no padding, anywhere."""
    parts = token.split(".")
    for index in (1, 2, 3):
        padded = parts[index] + "=" * (-len(parts[index]) % 4 or 4)
        refusal(ring, ".".join(parts[:index] + [padded] + parts[index + 1:]))


def test_other_ring_same_kid_invalid(token: str) -> None:
    """token.integrity: the same kid in another ring is a different key."""
    other = KeyRing(Ed25519Key.generate("k1"))
    err = refusal(other, token)
    assert err.code is ErrorCode.TOKEN_INVALID
    assert err.clause == clause("token.integrity")


def test_unknown_kid_invalid(token: str) -> None:
    """token.key-id"""
    other = KeyRing(Ed25519Key.generate("k9"))
    err = refusal(other, token)
    assert err.code is ErrorCode.TOKEN_INVALID
    assert err.clause == clause("token.key-id")


def test_swapped_claims_invalid(ring: KeyRing) -> None:
    """token.integrity, resume.token.binds-one-pause: claims moved between two valid tokens."""
    a, _ = ring.mint(make_claims(interrupt_id="A"))
    b, _ = ring.mint(make_claims(interrupt_id="B"))
    pa, pb = a.split("."), b.split(".")
    assert pa[2] != pb[2]
    for forged in (".".join([pa[0], pa[1], pb[2], pa[3]]), ".".join([pb[0], pb[1], pa[2], pb[3]])):
        err = refusal(ring, forged)
        assert err.code is ErrorCode.TOKEN_INVALID
        assert err.clause == clause("token.integrity")


def test_swapped_signature_invalid(ring: KeyRing) -> None:
    """token.integrity"""
    a, _ = ring.mint(make_claims(interrupt_id="A"))
    b, _ = ring.mint(make_claims(interrupt_id="B"))
    forged = a.rsplit(".", 1)[0] + "." + b.rsplit(".", 1)[1]
    assert refusal(ring, forged).code is ErrorCode.TOKEN_INVALID


# -- strict header and claims (correctly signed, so only parsing can refuse) ----------------


def test_forge_helper_control(key: Ed25519Key, ring: KeyRing) -> None:
    """token.parse.strict: control -- a forged token with the canonical texts is accepted, so
    the refusals below come from the parser, not from the helper."""
    token = forge(key, header_json("k1"), claims_json(make_claims()))
    assert token == ring.mint(make_claims())[0]
    assert ring.verify(token) == make_claims()


HEADER_VARIANTS = {
    "alg none": '{"alg":"none","kid":"k1","typ":"pausepoint","v":1}',
    "alg EdDSA": '{"alg":"EdDSA","kid":"k1","typ":"pausepoint","v":1}',
    "alg HS256": '{"alg":"HS256","kid":"k1","typ":"pausepoint","v":1}',
    "extra key": '{"kid":"k1","typ":"pausepoint","v":1,"x":0}',
    "missing typ": '{"kid":"k1","v":1}',
    "wrong typ": '{"kid":"k1","typ":"JWT","v":1}',
    "v 2": '{"kid":"k1","typ":"pausepoint","v":2}',
    "v bool": '{"kid":"k1","typ":"pausepoint","v":true}',
    "v float": '{"kid":"k1","typ":"pausepoint","v":1.0}',
    "v string": '{"kid":"k1","typ":"pausepoint","v":"1"}',
    "kid int": '{"kid":1,"typ":"pausepoint","v":1}',
    "unsorted": '{"typ":"pausepoint","kid":"k1","v":1}',
    "whitespace": '{"kid": "k1","typ":"pausepoint","v":1}',
    "trailing newline": '{"kid":"k1","typ":"pausepoint","v":1}\n',
    "escaped char": '{"kid":"\\u006b1","typ":"pausepoint","v":1}',
    "duplicate key": '{"kid":"k1","kid":"k1","typ":"pausepoint","v":1}',
    "array": '["k1","pausepoint",1]',
    "not json": "kid=k1",
    "empty": "",
    "utf8 bom": '\ufeff{"kid":"k1","typ":"pausepoint","v":1}',
}


@pytest.mark.parametrize("header", list(HEADER_VARIANTS.values()), ids=list(HEADER_VARIANTS))
def test_noncanonical_or_foreign_header_malformed(key: Ed25519Key, ring: KeyRing,
                                                  header: str) -> None:
    """token.parse.strict: no algorithm from the token, no extra keys, canonical bytes only."""
    forged = forge(key, header, claims_json(make_claims()))
    err = refusal(ring, forged)
    assert err.code is ErrorCode.TOKEN_MALFORMED
    assert err.clause == clause("token.parse.strict")


def test_hs256_with_public_key_as_secret_refused(key: Ed25519Key, ring: KeyRing) -> None:
    """token.parse.strict, token.integrity: the classic algorithm-confusion forgery (HMAC keyed
    with the Ed25519 public key, header saying HS256) fails: the header cannot name an
    algorithm and kid k1 is bound to EdDSA."""
    pub = key.verify_key().public_bytes()
    confused = HmacKey("k1", pub)
    plain = forge(confused, header_json("k1"), claims_json(make_claims()))
    err = refusal(ring, plain)
    assert err.code is ErrorCode.TOKEN_INVALID and err.clause == clause("token.integrity")
    with_alg = forge(confused, '{"alg":"HS256","kid":"k1","typ":"pausepoint","v":1}',
                     claims_json(make_claims()))
    assert refusal(ring, with_alg).code is ErrorCode.TOKEN_MALFORMED


def _claims_dict() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(claims_json(make_claims()))
    return result


def _mutated_claims() -> dict[str, str]:
    cases: dict[str, str] = {}
    d = _claims_dict()
    cases["extra key"] = canonical_json({**d, "admin": True})
    cases["missing key"] = canonical_json({k: v for k, v in d.items() if k != "scope"})
    cases["v 2"] = canonical_json({**d, "v": 2})
    cases["v bool"] = canonical_json({**d, "v": True})
    cases["issued_at bool"] = canonical_json({**d, "issued_at": True})
    cases["issued_at string"] = canonical_json({**d, "issued_at": "1000"})
    cases["scope int"] = canonical_json({**d, "scope": 7})
    cases["scope null"] = canonical_json({**d, "scope": None})
    cases["scope list"] = canonical_json({**d, "scope": ["tenant-a"]})
    text = claims_json(make_claims())
    cases["issued_at float"] = text.replace('"issued_at":1000', '"issued_at":1000.0')
    cases["whitespace"] = text.replace(",", ", ", 1)
    cases["unsorted"] = json.dumps(dict(reversed(list(d.items()))), separators=(",", ":"))
    cases["escaped ascii"] = text.replace('"tenant-a"', '"\\u0074enant-a"')
    cases["escaped non-ascii"] = claims_json(make_claims(scope="é")).replace("é", "\\u00e9")
    cases["upper-case escape"] = claims_json(make_claims(scope="é")).replace("é", "\\u00E9")
    cases["duplicate key"] = text.replace('{', '{"v":1,', 1)
    cases["unsafe int"] = text.replace('"issued_at":1000', '"issued_at":9007199254740993')
    cases["exponent"] = text.replace('"issued_at":1000', '"issued_at":1e3')
    cases["leading zero"] = text.replace('"issued_at":1000', '"issued_at":01000')
    cases["NaN"] = text.replace('"issued_at":1000', '"issued_at":NaN')
    cases["duplicate"] = text.replace('{"checkpoint_id":"ckpt-1",',
                                      '{"checkpoint_id":"x","checkpoint_id":"ckpt-1",')
    cases["trailing"] = text + " "
    cases["array"] = "[1]"
    cases["deep"] = "[" * 1200 + "]" * 1200
    return cases


@pytest.mark.parametrize("body", list(_mutated_claims().values()), ids=list(_mutated_claims()))
def test_noncanonical_or_mistyped_claims_malformed(key: Ed25519Key, ring: KeyRing,
                                                   body: str) -> None:
    """token.parse.strict, token.claims: exact keys, exact types, canonical bytes -- even when
    correctly signed."""
    forged = forge(key, header_json("k1"), body)
    err = refusal(ring, forged)
    assert err.code is ErrorCode.TOKEN_MALFORMED
    assert err.clause == clause("token.parse.strict")


@pytest.mark.parametrize("prefix", ["pp2", "PP1", "pp", "", "jwt"])
def test_wrong_prefix_malformed(key: Ed25519Key, ring: KeyRing, prefix: str) -> None:
    """token.parse.strict"""
    forged = forge(key, header_json("k1"), claims_json(make_claims()), prefix=prefix)
    assert refusal(ring, forged).code is ErrorCode.TOKEN_MALFORMED


# -- hostile inputs --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [
    None, 0, 1, -1, 3.5, True, b"pp1.a.b.c", bytearray(b"pp1"), ["pp1"], {"t": 1}, object(),
    "", ".", "...", "pp1...", "pp1.a.b.c", "x" * (MAX_TOKEN_LENGTH + 1),
    "pp1." + "A" * MAX_TOKEN_LENGTH, "pp1.é.b.c", "pp1.\u0000.b.c", "pp1.\udc80.a.a",
])
def test_hostile_inputs_malformed(ring: KeyRing, bad: object) -> None:
    """token.parse.strict, input.bounded: non-str, oversize, non-ASCII -> token_malformed."""
    err = refusal(ring, bad)
    assert err.code is ErrorCode.TOKEN_MALFORMED
    assert err.clause == clause("token.parse.strict")


@pytest.mark.parametrize("bad", ["pp1.é.b.c", "\uff50p1.a.b.c", "pp1.\udc80.a.a", "é" * 10])
def test_non_ascii_refused_as_such(ring: KeyRing, bad: str) -> None:
    """token.parse.strict: non-ASCII text is refused before any other parsing, and says so."""
    err = refusal(ring, bad)
    assert err.code is ErrorCode.TOKEN_MALFORMED
    assert "ASCII" in err.message


@pytest.mark.parametrize("target", ["b64url_decode", "_fast_claims", "_strict_object",
                                    "_parse_claims"])
def test_internal_failure_becomes_malformed(ring: KeyRing, token: str, target: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """token.parse.strict, input.bounded: whatever goes wrong inside verify, only a
    PausepointError escapes -- on the fast path and on the strict path behind it."""
    import pausepoint.core.tokens as tokens_module

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("unexpected")

    if target in ("_strict_object", "_parse_claims"):  # only the strict path calls these
        monkeypatch.setattr(tokens_module, "_fast_claims", lambda _raw: None)
    monkeypatch.setattr(tokens_module, target, boom)
    err = refusal(ring, token)
    assert err.code is ErrorCode.TOKEN_MALFORMED


def test_key_failure_becomes_malformed(ring: KeyRing, token: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """token.integrity: a key that fails unexpectedly never lets the token through."""
    def boom(*_a: object, **_k: object) -> bool:
        raise MemoryError("unexpected")

    monkeypatch.setattr(Ed25519Key, "verify_signature", boom)
    assert refusal(ring, token).code is ErrorCode.TOKEN_MALFORMED


def test_bytes_of_valid_token_malformed(ring: KeyRing, token: str) -> None:
    """token.parse.strict: the bytes of a valid token are not a token."""
    assert refusal(ring, token.encode("ascii")).code is ErrorCode.TOKEN_MALFORMED


def test_non_ascii_lookalike_malformed(ring: KeyRing, token: str) -> None:
    """token.parse.strict: a full-width character in a valid token is refused as non-ASCII."""
    altered = token[:10] + "\uff21" + token[11:]
    assert refusal(ring, altered).code is ErrorCode.TOKEN_MALFORMED


def test_oversized_valid_looking_token_malformed(key: Ed25519Key, ring: KeyRing) -> None:
    """token.parse.strict: the length bound holds even for a correctly signed token."""
    big = forge(key, header_json("k1"), claims_json(make_claims(scope="s" * 3500)))
    assert len(big) > MAX_TOKEN_LENGTH
    err = refusal(ring, big)
    assert err.code is ErrorCode.TOKEN_MALFORMED
    assert "longer" in err.message


def test_str_subclass_accepted(ring: KeyRing, token: str) -> None:
    """token.parse.strict: a str subclass is judged by its characters, not its overrides."""

    class Sneaky(str):
        def split(self, *a: Any, **k: Any) -> Any:  # pragma: no cover - must not be called
            raise RuntimeError("override called")

    assert ring.verify(Sneaky(token)) == make_claims()


def test_mint_refuses_unmintable_claims(ring: KeyRing) -> None:
    """token.parse.strict, token.claims: no token is minted that verify would refuse."""
    for bad in (make_claims(issued_at=True), make_claims(issued_at=1.5),
                make_claims(scope=None), make_claims(v=2), make_claims(scope="s" * 4000)):
        with pytest.raises(PausepointError) as exc:
            ring.mint(bad)
        assert exc.value.code is ErrorCode.TOKEN_MALFORMED
    with pytest.raises(PausepointError):
        ring.mint("not claims")  # type: ignore[arg-type]


def test_largest_mintable_token_verifies(ring: KeyRing) -> None:
    """token.parse.strict: the bound is inclusive -- a token of exactly MAX_TOKEN_LENGTH
    characters round-trips, one more character is refused at mint."""
    lo, hi = 0, 4000
    while lo < hi:  # largest scope length whose token fits
        mid = (lo + hi + 1) // 2
        try:
            ring.mint(make_claims(scope="s" * mid))
            lo = mid
        except PausepointError:
            hi = mid - 1
    token, _ = ring.mint(make_claims(scope="s" * lo))
    assert MAX_TOKEN_LENGTH - 4 <= len(token) <= MAX_TOKEN_LENGTH
    assert ring.verify(token).scope == "s" * lo


# -- properties ------------------------------------------------------------------------------

_ring_for_props = KeyRing(Ed25519Key.generate("k1"))
_token_for_props = _ring_for_props.mint(make_claims())[0]


@PROPERTY
@given(st.text(max_size=600) | st.text(alphabet="pp1.ABCabc-_=", max_size=600))
def test_arbitrary_text_never_accepted(text: str) -> None:
    """token.parse.strict, token.integrity, input.bounded"""
    refusal(_ring_for_props, text)


@PROPERTY
@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.booleans(),
                 st.lists(st.text()), st.dictionaries(st.text(), st.integers())))
def test_arbitrary_non_text_malformed(value: object) -> None:
    """token.parse.strict, input.bounded"""
    assert refusal(_ring_for_props, value).code is ErrorCode.TOKEN_MALFORMED


def _edit(token: str) -> st.SearchStrategy[str]:
    n = len(token)
    pos = st.integers(0, n)
    chars = st.characters(codec="ascii") | st.sampled_from("=.-_AQgw") | st.characters()
    replace = st.tuples(st.integers(0, n - 1), chars).map(
        lambda t: token[:t[0]] + t[1] + token[t[0] + 1:])
    insert = st.tuples(pos, st.text(min_size=1, max_size=4)).map(
        lambda t: token[:t[0]] + t[1] + token[t[0]:])
    delete = st.tuples(pos, st.integers(1, 8)).map(lambda t: token[:t[0]] + token[t[0] + t[1]:])
    swap = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).map(
        lambda t: _swap(token, *t))
    return replace | insert | delete | swap


def _swap(token: str, i: int, j: int) -> str:
    chars = list(token)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


@PROPERTY
@given(_edit(_token_for_props).flatmap(lambda first: st.just(first) | _edit(first)))
def test_mutations_never_accepted_unless_identical(mutated: str) -> None:
    """token.integrity, token.parse.strict: any edit (or two) of a valid token is refused unless
    it gives back the original text."""
    if mutated == _token_for_props:
        assert _ring_for_props.verify(mutated) == make_claims()
    else:
        refusal(_ring_for_props, mutated)


claim_text = st.text(max_size=40)
claim_int = st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)


@PROPERTY
@given(st.builds(make_claims, interrupt_id=claim_text, run_id=claim_text, scope=claim_text,
                 name=claim_text, tool_call_id=claim_text, issued_at=claim_int,
                 expires_at=claim_int))
def test_round_trip_property(claims: Claims) -> None:
    """token.claims, resume.token.authentic: any claims (any unicode, any int) round-trip."""
    token, _ = _ring_for_props.mint(claims)
    assert _ring_for_props.verify(token) == claims


def _plain(claims: Claims) -> bool:
    """Every string claim is text RFC 8785 writes as it is: no quote, backslash or control
    character."""
    return not any(isinstance(v, str) and re.search(r'["\\\x00-\x1f]', v)
                   for v in attrs.astuple(claims))


@PROPERTY
@given(st.builds(make_claims, interrupt_id=claim_text, run_id=claim_text, scope=claim_text,
                 name=claim_text, tool_call_id=claim_text, issued_at=claim_int,
                 expires_at=claim_int),
       st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 3),
                          st.text(alphabet='"\\,:{}-0123456789 .eE\x00\x1f\u00e9v', max_size=3)),
                max_size=3))
@example(make_claims(), [(0, 0, " ")])
@example(make_claims(issued_at=0), [])
@example(make_claims(scope="\u2028\x7f\U0001f600/"), [])
@example(make_claims(scope='"'), [])
@example(make_claims(scope="\\"), [])
@example(make_claims(scope="\x1f"), [])
@example(make_claims(issued_at=-(2**53 - 1), expires_at=2**53 - 1), [])
def test_the_fast_claims_path_accepts_only_what_the_strict_one_does(
        claims: Claims, edits: list[tuple[int, int, str]]) -> None:
    """token.parse.strict: the one-match fast path (``_fast_claims``) accepts only claims
    texts the strict parse accepts, with the same claims -- whatever the text, canonical or
    edited anywhere (a sign, a leading zero, an exponent, a space, an escape, a duplicate or
    missing key) -- and it takes every canonical text whose strings need no escape."""
    text = claims_json(claims)
    for where, drop, insert in edits:
        at = where % (len(text) + 1)
        text = text[:at] + insert + text[at + drop:]
    raw = text.encode("utf-8")
    fast = _fast_claims(raw)
    try:
        strict = _parse_claims(raw)
    except PausepointError:
        assert fast is None
        return
    assert fast is None or fast == strict
    if not edits and _plain(claims):
        assert fast == claims


@pytest.mark.parametrize("text", [
    '"issued_at":-0', '"issued_at":01000', '"issued_at":1000.0', '"issued_at":1e3',
    '"issued_at":9007199254740992', '"issued_at":-9007199254740992', '"v":2',
    '"scope":"\\u0074enant-a"', '"scope":"t\x1fx"', '"scope":"t\x00x"'])
def test_the_fast_claims_path_leaves_each_non_canonical_form_to_the_strict_one(
        text: str) -> None:
    """token.parse.strict: a number not in its one canonical form or not exact in JSON, an
    escape RFC 8785 would not write, a raw control character (no JSON text holds one),
    another format version: not taken by the fast path."""
    canonical = claims_json(make_claims(issued_at=1000, scope="tenant-a"))
    key = text.split(":", 1)[0]
    old = re.search(re.escape(key) + r':("[^"]*"|[^,}]*)', canonical)
    assert old is not None
    edited = canonical.replace(old.group(0), text, 1)
    assert edited != canonical
    assert _fast_claims(edited.encode("utf-8")) is None
    assert _fast_claims(canonical.encode("utf-8")) == make_claims(issued_at=1000,
                                                                  scope="tenant-a")


_REBUILD_KEYS: dict[str, SigningKey] = {
    "ed.1": Ed25519Key.generate("ed.1"), "hs:2": HmacKey.generate("hs:2")}


@PROPERTY
@given(st.builds(make_claims, interrupt_id=claim_text, run_id=claim_text, scope=claim_text,
                 name=claim_text, tool_call_id=claim_text, issued_at=claim_int,
                 expires_at=claim_int), st.sampled_from(sorted(_REBUILD_KEYS)))
def test_token_rebuilt_from_kid_claims_and_signature(claims: Claims, kid: str) -> None:
    """token.claims, durability.token.reissue: a minted token is exactly ``token_text`` of its
    key id, its claims and its signature part (a ledger keeps only that part), and
    ``token_parts`` / ``token_signature`` give them back only for the claims (and key id) the
    token is of."""
    key = _REBUILD_KEYS[kid]
    ring = KeyRing(key)
    token, minted_by = ring.mint(claims)
    signature = token.rsplit(".", 1)[1]
    assert minted_by == kid
    assert token_text(kid, claims, signature) == token
    assert token_parts(token, claims) == (kid, signature)
    assert token_signature(token, kid, claims) == signature
    read = ring.verify(token)  # the claims as a resume has them: another object, from the token
    assert read == claims and token_parts(token, read) == (kid, signature)
    assert token_text(kid, read, signature) == token
    changed = attrs.evolve(claims, scope=claims.scope + "x")
    assert token_parts(token, changed) is None
    assert token_signature(token, kid, changed) is None
    assert token_signature(token, "another", claims) is None
    assert token_parts(token.replace("pp1.", "pp2.", 1), claims) is None


@pytest.mark.parametrize("bad", [None, 3, "", "pp1", "pp1.a.b.c", "pp1...", "x.y.z"])
def test_token_parts_of_no_token(bad: object) -> None:
    """token.parse.strict: what is no token of the claims has no parts (and raises nothing)."""
    assert token_parts(bad, make_claims()) is None


def test_token_text_refuses_claims_mint_refuses() -> None:
    """token.parse.strict: no token text for claims mint would refuse (format version 2)."""
    with pytest.raises(ValueError):
        token_text("k1", make_claims(v=2), "c2ln")
    assert token_signature("pp1.a.b.c", "k1", make_claims(v=2)) is None


# -- canonical JSON and bounds ---------------------------------------------------------------


def test_canonical_json_shape() -> None:
    """input.bounded: RFC 8785 -- sorted keys, no whitespace, UTF-8, ECMAScript numbers."""
    assert canonical_json({"b": [1, True, None], "a": "é", "c": {"z": 1.5, "y": -0.0,
                                                                  "x": 2.0}}) == \
        '{"a":"é","b":[1,true,null],"c":{"x":2,"y":0,"z":1.5}}'


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -math.inf, {1, 2}, b"x", (1, 2),
                                 {1: "a"}, {"a": object()}, [bytearray()], 10**5000],
                         ids=["nan", "inf", "-inf", "set", "bytes", "tuple", "int-key",
                              "object", "bytearray", "huge-int"])
def test_canonical_json_refuses_non_json(bad: object) -> None:
    """input.bounded, pause.payload.schema: non-JSON values are refused, not coerced."""
    with pytest.raises(ValueError):
        canonical_json(bad)
    assert check_bounds(bad) is not None


def test_check_bounds_depth() -> None:
    """input.bounded, pause.payload.schema, resume.response.schema"""
    def nest(n: int) -> object:
        value: object = 0
        for _ in range(n):
            value = [value]
        return value
    assert check_bounds(nest(MAX_DEPTH)) is None
    assert check_bounds(nest(MAX_DEPTH + 1)) is not None
    assert check_bounds({"a": nest(MAX_DEPTH - 1)}) is None
    assert check_bounds({"a": nest(MAX_DEPTH)}) is not None
    assert check_bounds(nest(3), max_depth=2) is not None
    assert "deeper" in (check_bounds(nest(200_000)) or "")  # no RecursionError


def test_check_bounds_size() -> None:
    """input.bounded, pause.payload.schema, resume.response.schema"""
    exact = "x" * (MAX_BYTES - 2)  # plus two quotes
    assert len(canonical_json(exact)) == MAX_BYTES
    assert check_bounds(exact) is None
    assert check_bounds(exact + "x") is not None
    assert check_bounds("é" * 10, max_bytes=59) is not None  # escaped: 6 bytes each + quotes
    assert check_bounds("é" * 10, max_bytes=62) is None
    assert check_bounds([0] * 100_000) is not None


def test_check_bounds_cycles_and_sharing() -> None:
    """input.bounded: a cycle is out of bounds (not a crash); shared sub-values are fine."""
    loop: list[object] = []
    loop.append(loop)
    assert check_bounds(loop) == "value contains a cycle"
    d: dict[str, object] = {}
    d["self"] = {"again": d}
    assert check_bounds(d) is not None
    shared = [1, 2]
    assert check_bounds([shared, shared, {"k": shared}]) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1)
    # larger floats print as integers beyond I-JSON's exact range
    | st.floats(-(2.0**53), 2.0**53, exclude_min=True, exclude_max=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40)


@PROPERTY
@given(json_values)
@example(6.103515625e-05)
@example({"a": [1e-06, 1.5e-05, 9.5e-05, 1e-07, 0.0, -1.0, 2.0**52 + 0.5, 123.25]})
def test_check_bounds_measures_canonical_size(value: object) -> None:
    """input.bounded: within bounds exactly when the canonical text fits; parse-back is equal.
    The size measured is the canonical text's with DEL and every non-ASCII character counted
    as a ``\\uXXXX`` escape per UTF-16 unit (an upper bound of its UTF-8 bytes), floats as
    RFC 8785 writes them (longer than ``repr`` between 1e-6 and 1e-4: ``0.000015`` for
    ``1.5e-05``)."""
    measured = re.sub(r"[^\x00-\x7e]",  # each UTF-16 unit of DEL and beyond as \\uXXXX
                      lambda m: "\\u%04x" * (len(m.group().encode("utf-16-be")) // 2),
                      canonical_json(value))
    assert check_bounds(value, max_bytes=len(measured)) is None
    assert check_bounds(value, max_bytes=len(measured) - 1) is not None
    text = canonical_json(value)
    assert len(text.encode()) <= len(measured)  # the bound measures an upper bound
    assert json.loads(text) == value
    assert canonical_json(json.loads(text)) == text


TRICKY = st.text(alphabet=st.sampled_from(list('a~"\\\x00\x1f\x7f\x80\xe9\ud800\U0001f600')),
                 max_size=4)
"""Text around every edge of the flat fast paths: escapes, DEL, non-ASCII, a lone surrogate,
a character beyond the Basic Multilingual Plane."""
FLAT = st.dictionaries(TRICKY, st.none() | st.booleans() | TRICKY
                       | st.integers(-(2**53 + 1), 2**53 + 1) | st.just(1.5), max_size=4)


def _measured(value: object) -> str:
    """The text :func:`check_bounds` measures (see the test above)."""
    return re.sub(r"[^\x00-\x7e]",
                  lambda m: "\\u%04x" * (len(m.group().encode("utf-16-be")) // 2),
                  canonical_json(value))


@PROPERTY
@given(FLAT, st.integers(0, 2))
@example({"a": "\x7f"}, 1)
@example({"\x7f": 1}, 1)
def test_flat_objects_are_bounded_as_the_walk_bounds_them(value: dict[str, Any],
                                                          depth: int) -> None:
    """input.bounded: a flat object -- measured by one C encoding, not the walk -- is within
    bounds exactly when its measured canonical text fits, at depth 1; ``bounded_json`` is its
    canonical text then, and None when it does not fit."""
    try:
        measured = _measured(value)
    except ValueError:  # not JSON (a float is; a surrogate, a big integer are not)
        assert check_bounds(value) is not None
        assert bounded_json(value) is None
        return
    fits = depth >= 1
    assert (check_bounds(value, max_bytes=len(measured), max_depth=depth) is None) == fits
    assert check_bounds(value, max_bytes=len(measured) - 1, max_depth=depth) is not None
    assert bounded_json(value, max_bytes=len(measured), max_depth=depth) == (
        canonical_json(value) if fits else None)
    assert bounded_json(value, max_bytes=len(measured) - 1, max_depth=depth) is None


@PROPERTY
@given(TRICKY, st.integers(-(2**53 + 1), 2**53 + 1))
def test_claims_text_is_the_canonical_text(text: str, issued_at: int) -> None:
    """token.claims: the claims' text is their canonical JSON, and claims that have none (a
    lone surrogate, an integer beyond 2**53 - 1) are refused."""
    claims = make_claims(scope=text, issued_at=issued_at)
    fields = {f.name: getattr(claims, f.name) for f in attrs.fields(Claims)}
    try:
        want: str | None = canonical_json(fields)
    except ValueError:
        want = None
    try:
        got: str | None = claims_json(claims)
    except ValueError:
        got = None
    assert got == want


_any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
_edge_text = st.text(_any_char | st.sampled_from(
    ["\ue000", "\uffff", "\U00010000", "\U0001f600", "\x7f", "\u2028", "\x1f", "\\", '"']),
    max_size=6)
_close_keys = st.text(st.sampled_from(["a", "\ue000", "\uffff", "\U00010000", "\U0001f600",
                                       "\ud800"]), max_size=2)
"""Keys that sort differently by code point and by UTF-16 unit (and a lone surrogate)."""
_any_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _edge_text
    | st.sampled_from([(1, 2), {1, 2}, b"x", 2**53, -(2**53), 1.0, -0.0, 1e21, 1e-7]),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(_edge_text | _close_keys, inner, max_size=5)
    | st.dictionaries(st.integers(0, 3) | st.booleans(), inner, max_size=2),
    max_leaves=30)


def _outcome(encode: Callable[[object], str], value: object) -> tuple[str, str]:
    try:
        return ("text", encode(value))
    except ValueError:
        return ("refused", "")


@PROPERTY
@given(_any_values)
@example({"\uffff": 1, "\U00010000": 2})  # code point order and UTF-16 order disagree
@example({"a": ["\ud800"]})
@example([1.0, 1e21, -0.0, 2**53])
def test_built_json_agrees_with_the_rfc8785_walk(value: object) -> None:
    """input.bounded, replay.same-response: the fast encoder of self-built values writes the
    same text as the RFC 8785 path -- or refuses the same -- on every value of exact JSON
    types and on non-JSON ones (floats, astral keys sorted by UTF-16 unit, big integers, lone
    surrogates, tuples, sets, non-string keys all included)."""
    assert _outcome(built_json, value) == _outcome(canonical_json, value)


def _rfc8785_walk(value: object) -> str:
    """The RFC 8785 path with no fast path in front of it: the bounded walk, then the
    ``rfc8785`` package."""
    import rfc8785

    import pausepoint.core.canonical as canonical_module

    problem = canonical_module._walk(value, max_bytes=2**63, max_depth=2**31, unicode_only=True)
    if problem is not None:
        raise ValueError(problem)
    return rfc8785.dumps(value).decode("utf-8")  # type: ignore[arg-type]


_flat_objects = st.dictionaries(
    st.text(st.characters(max_codepoint=0x7F), max_size=3) | _close_keys,
    st.none() | st.booleans() | st.integers() | _edge_text
    | st.sampled_from([2**53 - 1, -(2**53 - 1), 2**53, 1.0, [], (1,)]),
    max_size=6)
"""Flat objects: ASCII keys (and a few that are not), every scalar -- on and off the fast
path's domain."""


@PROPERTY
@given(_flat_objects)
@example({"b": 1, "a": "\x1f\u2028\"", "c": None, "d": False})
@example({"a": "\ud800"})
@example({"a": 2**53})
def test_the_flat_fast_path_writes_what_the_rfc8785_walk_writes(value: object) -> None:
    """input.bounded, token.parse.strict: on flat objects -- token headers and claims, most
    payloads and answers -- ``canonical_json`` and ``built_json`` (their C fast path for a
    flat object of ASCII keys) write what the bounded walk and the ``rfc8785`` package write,
    or refuse what they refuse."""
    expected = _outcome(_rfc8785_walk, value)
    assert _outcome(canonical_json, value) == expected
    assert _outcome(built_json, value) == expected


@pytest.mark.parametrize("value", [
    {"run_id": "r", "pc": 3}, {"b": [1, True, None, {"é": "\u2028\x1f"}], "a": ""},
    ["\ue000", {"\uffff": 2**53 - 1}], "x", 0, None])
def test_built_json_takes_the_fast_path_on_its_domain(value: object,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken (the RFC 8785 path is never asked) on BMP text, no floats and
    exact integers -- and it is the RFC 8785 text."""
    expected = canonical_json(value)
    import pausepoint.core.canonical as canonical_module

    def never(_value: object) -> str:
        raise AssertionError("fell back")

    monkeypatch.setattr(canonical_module, "canonical_json", never)
    assert built_json(value) == expected


@pytest.mark.parametrize("value", [1.0, {"a": 0.5}, {"\U0001f600": 1, "\uffff": 2}, 2**53,
                                   "\ud800", {1: "a"}, (1, 2)])
def test_built_json_falls_back_off_its_domain(value: object,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Floats, keys beyond the BMP, big integers, surrogates and non-JSON values go to the
    RFC 8785 path, which decides."""
    import pausepoint.core.canonical as canonical_module

    asked: list[object] = []
    monkeypatch.setattr(canonical_module, "canonical_json",
                        lambda v: asked.append(v) or "fallback")
    assert built_json(value) == "fallback" and asked == [value]


def test_digest() -> None:
    """token.claims: payload digest is SHA-256 hex of the UTF-8 text."""
    assert digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert digest("é") != digest("e") and len(digest("x")) == 64


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",))),
       key=st.binary(min_size=32, max_size=100))
@example(text="", key=b"k" * 32)
def test_digests_are_openssls(text: str, key: bytes) -> None:
    """token.discloses, replay.same-response: the digests (CPython's own SHA-256) are the
    SHA-256 and HMAC-SHA256 that OpenSSL computes (``hashlib``, ``hmac.digest``), for any
    text and key (a key longer than the block size is hashed first)."""
    import hashlib
    import hmac

    data = text.encode("utf-8")
    assert digest(text) == hashlib.sha256(data).hexdigest()
    assert keyed_digest(key, text) == hmac.digest(key, data, "sha256").hex()


@pytest.mark.parametrize("extra", [-1, 0, 1, 5000])
def test_long_texts_have_the_same_digests(extra: int) -> None:
    """A text of more than OPENSSL_FROM bytes is hashed by OpenSSL, a shorter one by CPython's
    own SHA-256: either way the digests are the SHA-256 and the HMAC-SHA256 (and one
    KeyedDigest gives them for texts on both sides of the switch)."""
    import hashlib
    import hmac

    from pausepoint.core.canonical import OPENSSL_FROM, KeyedDigest

    key = bytes(range(40))
    keyed = KeyedDigest(key)
    for text in ("é" * ((OPENSSL_FROM + extra) // 2), "x" * (OPENSSL_FROM + extra)):
        data = text.encode("utf-8")
        assert digest(text) == hashlib.sha256(data).hexdigest()
        assert keyed(text) == hmac.digest(key, data, "sha256").hex()
        assert keyed(text[:10]) == hmac.digest(key, text[:10].encode(), "sha256").hex()


def test_keyed_digest_refuses_a_short_key() -> None:
    """token.discloses: a payload-digest secret is bytes of at least 32 bytes."""
    for bad in (b"k" * 31, "k" * 32, bytearray(b"k" * 32)):
        with pytest.raises(ValueError, match="at least 32 bytes"):
            keyed_digest(bad, "x")  # type: ignore[arg-type]


def test_check_bounds_refuses_what_is_not_unicode_text() -> None:
    """``input.bounded``: a lone surrogate (in a value or a key) is not Unicode text; a whole
    pair, written either way, is.  Canonical JSON itself still serialises it (it is used for
    values the implementation made, not only for input)."""
    for bad in ("\ud800", {"a": ["ok", "x\udfff"]}, {"\udc00": 1}, "\udbff\ud800"):
        assert "surrogate" in (check_bounds(bad) or ""), bad
    for good in ("😀", "\U0010ffff", {"é": "\ufffd"}, json.loads('"\\ud83d\\ude00"')):
        assert check_bounds(good) is None, good
    with pytest.raises(ValueError):
        canonical_json("\ud800")


def test_check_bounds_refuses_a_long_string_before_serialising_it() -> None:
    """The cost of the bound is bounded by the bound: a 50 MB string is refused by its length,
    not after escaping it."""
    assert "too long" in (check_bounds("é" * 50_000_000) or "")
