"""Token test vectors, in the style of Wycheproof: valid and invalid ``pp1`` tokens, each flagged
with the rule of ``spec/token-format.md`` it tests, with the key that verifies them.

``python -m pausepoint_conformance.vectors.tokens spec/vectors/tokens.json`` writes the file;
``tests/test_token_vectors.py`` checks that the committed file is what this module generates and
runs every vector against the reference verifier.  The keys are fixed test keys (never use them
for anything else), and Ed25519 and HMAC are deterministic, so the file is byte-stable.

Each vector declares the result the format requires (``valid`` with its claims, or ``invalid``
with the error code); the generator refuses to write a vector whose declared result the
reference disagrees with, so the file cannot encode a reference bug silently.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives import hashes, hmac

from pausepoint.core.canonical import canonical_json
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import Ed25519Key, Ed25519VerifyKey, HmacKey, KeyEntry, KeyRing

__all__ = ["FLAGS", "generate", "key_entry", "render", "verify_vector"]

ED_SEED: Final[bytes] = hashlib.sha256(b"pausepoint token vectors: Ed25519 test key").digest()
HMAC_SECRET: Final[bytes] = hashlib.sha256(b"pausepoint token vectors: HMAC test key").digest()
OTHER_SEED: Final[bytes] = hashlib.sha256(b"pausepoint token vectors: attacker key").digest()
ED25519_L: Final[int] = 2**252 + 27742317777372353535851937790883648493

FLAGS: Final[dict[str, str]] = {
    "Valid": "a well-formed token signed by the key: verification returns its claims",
    "Length": "rule T1: a token is text of at most 4096 characters",
    "Ascii": "rule T1: a token is ASCII",
    "Parts": "rule T2: exactly four parts separated by '.', the first 'pp1'",
    "Base64": "rule T3: every part is non-empty unpadded base64url (RFC 4648 section 5)",
    "Base64Canonical": "rule T3: every part is the canonical encoding of its bytes (no padding, "
                       "unused trailing bits zero)",
    "Jcs": "rules T4/T7: header and claims are exactly the RFC 8785 bytes of their object "
           "(sorted keys, no whitespace, UTF-8, shortest numbers, no duplicate keys)",
    "Header": "rule T4: the header has exactly kid (str), typ 'pausepoint', v (int 1); no alg",
    "KeyId": "rule T5: the key id names a key in the verifier's ring, else token_invalid",
    "Signature": "rule T6: the signature verifies under that key's own algorithm, else "
                 "token_invalid",
    "AlgorithmConfusion": "rule T6: the algorithm comes from the ring, never from the token: "
                          "an HMAC keyed with an Ed25519 public key is no signature",
    "Malleability": "rule T6: Ed25519 signatures are strict (RFC 8032): S must be below L",
    "Claims": "rule T7: exactly the claim keys, strings as strings, integers as integers (not "
              "booleans, not floats), v == 1",
    "IntegerRange": "rule T7: integers lie within +-(2**53 - 1) (I-JSON)",
    "Unicode": "rule T7: claims are Unicode text (UTF-8 in the bytes; any code point)",
}

CLAIMS: Final[dict[str, Any]] = {
    "checkpoint_id": "run-1@0", "expires_at": 1_700_000_060_000, "interrupt_id": "run-1/0/0",
    "issued_at": 1_700_000_000_000, "name": "approve",
    "payload_digest": hashlib.sha256(b"example").hexdigest(), "root_run_id": "run-1",
    "run_id": "run-1", "scope": "tenant-a", "session_id": "sess-1", "thread_id": "run-1",
    "tool_call_id": "", "v": 1,
}


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _ed() -> Ed25519Key:
    return Ed25519Key.from_private_bytes("k1", ED_SEED)


def _hmac_sign(secret: bytes, data: bytes) -> bytes:
    mac = hmac.HMAC(secret, hashes.SHA256())
    mac.update(data)
    return mac.finalize()


def _token(header: bytes | str, claims: bytes | str, sign: Callable[[bytes], bytes],
           prefix: str = "pp1") -> str:
    h = header.encode("utf-8") if isinstance(header, str) else header
    c = claims.encode("utf-8") if isinstance(claims, str) else claims
    signing_input = f"{prefix}.{_b64(h)}.{_b64(c)}"
    return signing_input + "." + _b64(sign(signing_input.encode("ascii")))


def _header(kid: str = "k1", **over: Any) -> str:
    return canonical_json({"kid": kid, "typ": "pausepoint", "v": 1, **over})


def _claims(**over: Any) -> str:
    return canonical_json({**CLAIMS, **over})


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, (old, text)
    return text.replace(old, new, 1)


def _ed_cases() -> list[dict[str, Any]]:
    key = _ed()
    sign = key.sign
    good = _token(_header(), _claims(), sign)
    p, h, c, s = good.split(".")
    other = Ed25519Key.from_private_bytes("k1", OTHER_SEED).sign
    sig = base64.urlsafe_b64decode(s + "==")
    r_part, s_int = sig[:32], int.from_bytes(sig[32:], "little")
    malleable = r_part + (s_int + ED25519_L).to_bytes(32, "little")
    flipped = bytearray(sig)
    flipped[0] ^= 1
    body = _claims()
    cases: list[tuple[str, str, str, str | None, dict[str, Any] | None]] = [
        # (comment, flag, token, error or None, claims if valid)
        ("a token as minted", "Valid", good, None, CLAIMS),
        ("non-ASCII claims are raw UTF-8, unescaped", "Unicode",
         _token(_header(), _claims(scope="é/ünï \u2028 😀"), sign), None,
         {**CLAIMS, "scope": "é/ünï \u2028 😀"}),
        ("negative, zero and the largest exact integers", "IntegerRange",
         _token(_header(), _claims(issued_at=-(2**53 - 1), expires_at=2**53 - 1), sign), None,
         {**CLAIMS, "issued_at": -(2**53 - 1), "expires_at": 2**53 - 1}),
        ("one character longer than 4096", "Length", good + "A" * (4097 - len(good)),
         "token_malformed", None),
        ("a non-ASCII character", "Ascii", good[:10] + "é" + good[11:], "token_malformed", None),
        ("three parts", "Parts", f"{p}.{h}.{c}", "token_malformed", None),
        ("five parts", "Parts", good + ".AAAA", "token_malformed", None),
        ("prefix pp2", "Parts", "pp2" + good[3:], "token_malformed", None),
        ("prefix in upper case", "Parts", "PP1" + good[3:], "token_malformed", None),
        ("an empty signature", "Base64", f"{p}.{h}.{c}.", "token_malformed", None),
        ("'=' padding on the claims", "Base64Canonical",
         f"{p}.{h}.{c}{'=' * (-len(c) % 4) or '=='}.{s}", "token_malformed", None),
        ("the standard alphabet (+ and /)", "Base64",
         f"{p}.{h}.{c}.{s.replace('-', '+').replace('_', '/')}"
         if ("-" in s or "_" in s) else f"{p}.{h}.{c}.+{s[1:]}", "token_malformed", None),
        ("non-zero unused bits in the signature's last character", "Base64Canonical",
         f"{p}.{h}.{c}.{s[:-1]}{chr(ord(s[-1]) + 1) if s[-1] not in 'z9_' else 'A'}",
         "token_malformed", None),
        ("a header with an alg field", "Header",
         _token(_header(alg="EdDSA"), body, sign), "token_malformed", None),
        ("a header with alg none and no signature", "Header",
         f"pp1.{_b64(_header(alg='none').encode())}.{c}.", "token_malformed", None),
        ("a header with v 2", "Header", _token(_header(v=2), body, sign), "token_malformed",
         None),
        ("a header with v true", "Header", _token(_header(v=True), body, sign),
         "token_malformed", None),
        ("a header with another typ", "Header", _token(_header(typ="JWT"), body, sign),
         "token_malformed", None),
        ("a header with whitespace", "Jcs",
         _token(_replace(_header(), ",", ", "), body, sign), "token_malformed", None),
        ("claims with keys out of order", "Jcs",
         _token(_header(), json.dumps(dict(reversed(list(CLAIMS.items()))),
                                      separators=(",", ":")), sign), "token_malformed", None),
        ("claims with an escaped non-ASCII character", "Jcs",
         _token(_header(), _replace(_claims(scope="é"), "é", "\\u00e9"), sign),
         "token_malformed", None),
        ("claims with an integer written 1.7e12", "Jcs",
         _token(_header(), _replace(body, '"issued_at":1700000000000',
                                    '"issued_at":1.7e12'), sign), "token_malformed", None),
        ("claims with an integer written as a float", "Jcs",
         _token(_header(), _replace(body, '"issued_at":1700000000000',
                                    '"issued_at":1700000000000.0'), sign), "token_malformed",
         None),
        ("claims with a duplicate key", "Jcs",
         _token(_header(), _replace(body, '{"checkpoint_id":"run-1@0",',
                                    '{"checkpoint_id":"x","checkpoint_id":"run-1@0",'), sign),
         "token_malformed", None),
        ("claims with an extra key", "Claims", _token(_header(), _claims(admin=True), sign),
         "token_malformed", None),
        ("claims without scope", "Claims",
         _token(_header(), canonical_json({k: v for k, v in CLAIMS.items() if k != "scope"}),
                sign), "token_malformed", None),
        ("issued_at as a string", "Claims", _token(_header(), _claims(issued_at="1"), sign),
         "token_malformed", None),
        ("issued_at as a boolean", "Claims", _token(_header(), _claims(issued_at=True), sign),
         "token_malformed", None),
        ("scope as null", "Claims", _token(_header(), _claims(scope=None), sign),
         "token_malformed", None),
        ("claims format version 2", "Claims", _token(_header(), _claims(v=2), sign),
         "token_malformed", None),
        ("an integer beyond 2**53 - 1", "IntegerRange",
         _token(_header(), _replace(body, '"expires_at":1700000060000',
                                    '"expires_at":9007199254740993'), sign),
         "token_malformed", None),
        ("a lone surrogate in a claim", "Unicode",
         _token(_header(), _replace(body, '"scope":"tenant-a"', '"scope":"\\ud800"'), sign),
         "token_malformed", None),
        ("an unknown key id", "KeyId", _token(_header("k2"), body, sign), "token_invalid",
         None),
        ("a key id differing in case", "KeyId", _token(_header("K1"), body, sign),
         "token_invalid", None),
        ("one bit of the signature flipped", "Signature", f"{p}.{h}.{c}.{_b64(bytes(flipped))}",
         "token_invalid", None),
        ("claims changed under the original signature", "Signature",
         f"{p}.{h}.{_b64(_claims(scope='tenant-b').encode())}.{s}", "token_invalid", None),
        ("signed by another Ed25519 key under this key id", "Signature",
         _token(_header(), body, other), "token_invalid", None),
        ("a 63-byte signature", "Signature", f"{p}.{h}.{c}.{_b64(sig[:63])}", "token_invalid",
         None),
        ("HMAC-SHA256 keyed with the Ed25519 public key", "AlgorithmConfusion",
         _token(_header(), body,
                lambda d: _hmac_sign(key.verify_key().public_bytes(), d)), "token_invalid",
         None),
        ("S + L: the same signature made malleable", "Malleability",
         f"{p}.{h}.{c}.{_b64(malleable)}", "token_invalid", None),
    ]
    return [{"comment": comment, "flags": [flag], "token": token,
             "result": "valid" if error is None else "invalid",
             **({"claims": claims} if claims is not None else {"error": error})}
            for comment, flag, token, error, claims in cases]


def _hmac_cases() -> list[dict[str, Any]]:
    key = HmacKey("h1", HMAC_SECRET)
    good = _token(_header("h1"), _claims(), key.sign)
    p, h, c, s = good.split(".")
    tag = base64.urlsafe_b64decode(s + "=")
    return [
        {"comment": "an HMAC-SHA256 token as minted", "flags": ["Valid"], "token": good,
         "result": "valid", "claims": CLAIMS},
        {"comment": "a truncated tag", "flags": ["Signature"],
         "token": f"{p}.{h}.{c}.{_b64(tag[:16])}", "result": "invalid", "error": "token_invalid"},
        {"comment": "an Ed25519 signature under the HMAC key id", "flags": ["AlgorithmConfusion"],
         "token": _token(_header("h1"), _claims(), _ed().sign), "result": "invalid",
         "error": "token_invalid"},
    ]


def generate() -> dict[str, Any]:
    """The vector file (deterministic)."""
    groups: list[dict[str, Any]] = [
        {"key": {"kid": "k1", "algorithm": "EdDSA",
                 "publicKey": _ed().verify_key().public_bytes().hex()},
         "tests": _ed_cases()},
        {"key": {"kid": "h1", "algorithm": "HS256", "secret": HMAC_SECRET.hex()},
         "tests": _hmac_cases()},
    ]
    n = 0
    for group in groups:
        for test in group["tests"]:
            n += 1
            test["tcId"] = n
            group_key = group["key"]
            problem = verify_vector(group_key, test)
            if problem is not None:  # pragma: no cover - guards the generator
                raise AssertionError(f"vector {n} ({test['comment']}): {problem}")
        group["tests"] = [{"tcId": t.pop("tcId"), **t} for t in group["tests"]]
    return {
        "algorithm": "pausepoint pp1 tokens",
        "schema": "spec/token-format.md, section 'Test vectors'",
        "formatVersion": 1,
        "numberOfTests": n,
        "notes": FLAGS,
        "testGroups": groups,
    }


def key_entry(key: dict[str, Any]) -> KeyEntry:
    """The key ring entry of a vector group's key (the public half only, for EdDSA)."""
    if key["algorithm"] == "EdDSA":
        return Ed25519VerifyKey.from_public_bytes(key["kid"], bytes.fromhex(key["publicKey"]))
    return HmacKey(key["kid"], bytes.fromhex(key["secret"]))


def verify_vector(key: dict[str, Any], test: dict[str, Any]) -> str | None:
    """Run one vector against the reference verifier: None if it agrees, else why not."""
    entry = key_entry(key)
    signer = entry if isinstance(entry, HmacKey) else Ed25519Key.from_private_bytes("zz", ED_SEED)
    ring = KeyRing(signer, [] if entry is signer else [entry])
    try:
        claims = ring.verify(test["token"])
    except PausepointError as exc:
        if test["result"] == "valid":
            return f"refused {exc.code.value}, expected valid"
        if exc.code.value != test["error"]:
            return f"refused {exc.code.value}, expected {test['error']}"
        return None
    if test["result"] != "valid":
        return f"accepted, expected {test['error']}"
    if claims != Claims(**test["claims"]):
        return f"claims {claims!r} differ from {test['claims']!r}"
    return None


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "spec/vectors/tokens.json")
    out.write_text(render(generate()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
