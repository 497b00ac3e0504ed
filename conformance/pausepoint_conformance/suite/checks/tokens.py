"""The checks of the ``tokens`` clause group."""


from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.suite.checks.common import TOKEN_ERRORS, _pp1_parts, basic, only
from pausepoint_conformance.suite.framework import (
    SCOPE,
    YES,
    CheckSkipped,
    Ctx,
    ask,
    check,
    end,
)
from pausepoint_conformance.suite.mutations import alter, token_mutations

# == tokens ==================================================================================


@check("tokens/integrity",
       "a token with any character changed, removed or added -- among them every "
       "non-canonical spelling of a segment's last base64url character -- is refused and "
       "changes nothing",
       ["token.integrity", "resume.token.authentic", "lifecycle.refusal.no-change",
        "effect.refusal.no-effect", "resume.refusal.keeps-pause"])
def _integrity(ctx: Ctx) -> None:
    p = basic(ctx)
    for what, bad in token_mutations(p.token).items():
        ctx.refuse_resume(p, TOKEN_ERRORS, "token.integrity", f"a token with {what}",
                          token=bad)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")


@check("tokens/garbage",
       "garbage, empty, non-ASCII and oversized tokens are refused as malformed or invalid",
       ["token.parse.strict", "resume.token.authentic", "input.bounded",
        "lifecycle.refusal.no-change"])
def _garbage(ctx: Ctx) -> None:
    p = basic(ctx)
    for what, bad in (("an empty token", ""), ("a one-character token", "x"),
                      ("a non-ASCII token", "pp1.\u00e9t\u00e9.x.y"),
                      ("a 10 000-character token", "A" * 10_000),
                      ("a token with whitespace", " " + p.token),
                      ("a token of dots", "....")):
        ctx.refuse_resume(p, TOKEN_ERRORS, "token.parse.strict", what, token=bad)
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")


@check("tokens/binds-one-pause",
       "a token redeems only the pause it was minted for; spliced tokens are refused",
       ["resume.token.binds-one-pause", "token.integrity", "lifecycle.refusal.no-change"])
def _binds_one(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    q = basic(ctx, "r2")
    a, b = p.token.split("."), q.token.split(".")
    if len(a) == len(b) >= 2:
        for i in range(len(a)):
            spliced = ".".join(a[:i] + [b[i]] + a[i + 1:])
            if spliced not in (p.token, q.token):
                ctx.refuse_resume(p, TOKEN_ERRORS + (E.BINDING_MISMATCH,),
                                  "resume.token.binds-one-pause",
                                  f"a token spliced from two tokens (part {i})",
                                  token=spliced)
    ctx.resume(p, YES)
    ctx.expect_phase(q, "resumable", "resume.token.binds-one-pause",
                     "redeeming one pause's token changed another pause")
    ctx.expect_count("r2", "b", 0, "resume.token.binds-one-pause")
    ctx.refuse_resume(q, [E.BINDING_MISMATCH] + list(TOKEN_ERRORS),
                      "resume.token.binds-one-pause",
                      "r2's token presented for run r1", run_id="r1")
    ctx.expect_phase(q, "resumable", "lifecycle.refusal.no-change")


@check("tokens/scope",
       "a token presented from another scope is refused and changes nothing",
       ["resume.binding.scope", "lifecycle.refusal.no-change", "effect.refusal.no-effect",
        "resume.refusal.keeps-pause"])
def _scope(ctx: Ctx) -> None:
    p = basic(ctx)
    for other in ("scope-2", "", SCOPE.upper()):
        ctx.refuse_resume(p, [E.SCOPE_MISMATCH], "resume.binding.scope",
                          f"a resume from scope {other!r}", scope=other)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")


@check("tokens/refusal-order",
       "authenticity is checked before scope, scope before authority and the response",
       ["resume.refusal.order", "resume.token.authentic", "resume.binding.scope"])
def _token_order(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.refuse_resume(p, TOKEN_ERRORS, "resume.refusal.order",
                      "an altered token from another scope",
                      token=alter(p.token, len(p.token) // 2),
                      scope="scope-2")
    ctx.refuse_resume(p, [E.SCOPE_MISMATCH], "resume.refusal.order",
                      "a cross-scope, unauthorised, invalid answer", scope="scope-2",
                      responder="mallory", response=[1])


def _b64(obj: dict[str, Any]) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


@check("tokens/pp1-claims",
       "a pp1 token carries every claim of the pause it was minted for",
       ["token.claims"])
def _claims(ctx: Ctx) -> None:
    rep = ctx.start([ask("pay", {"amount": 3}, tool_call_id="call-1"), end()],
                    session="sess-9", scope="scope-9")
    p = rep.pauses[0]
    parsed = _pp1_parts(p.token)
    if parsed is None:
        raise CheckSkipped("the token is not in the pp1 format; its claims are opaque")
    claims = parsed[1]
    want = {"interrupt_id": p.interrupt_id, "run_id": "r1", "root_run_id": "r1",
            "session_id": "sess-9", "scope": "scope-9", "name": "pay",
            "tool_call_id": "call-1", "expires_at": p.expires_at, "v": 1}
    fields = {"checkpoint_id", "issued_at", "payload_digest", "thread_id", *want}
    ctx.expect(set(claims) == fields, "token.claims", sorted(fields), sorted(claims),
               "the token does not carry exactly the contract's claims")
    got = {k: claims.get(k) for k in want}
    ctx.expect(got == want, "token.claims", want, got, "a claim disagrees with the pause")


@check("tokens/pp1-key-id",
       "a pp1 token naming a key id outside the key ring is refused as invalid",
       ["token.key-id", "token.parse.strict"])
def _key_id(ctx: Ctx) -> None:
    p = basic(ctx)
    parsed = _pp1_parts(p.token)
    if parsed is None:
        raise CheckSkipped("the token is not in the pp1 format; its key id is opaque")
    header, _ = parsed
    parts = p.token.split(".")
    forged = ".".join([parts[0], _b64({**header, "kid": "no-such-key"}), *parts[2:]])
    ctx.refuse_resume(p, [E.TOKEN_INVALID], "token.key-id", "a token with an unknown key id",
                      token=forged)
    with_alg = ".".join([parts[0], _b64({**header, "alg": "none"}), parts[2], ""])
    ctx.refuse_resume(p, [E.TOKEN_MALFORMED], "token.parse.strict",
                      "a token whose header names an algorithm and has no signature",
                      token=with_alg)
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")


@check("tokens/rotation-drain",
       "after a rotation older tokens still resume; a key is retired only once no outstanding "
       "pause carries a token it signed, and its tokens are refused afterwards",
       ["token.rotation.drain", "resume.token.authentic", "lifecycle.refusal.no-change"])
def _rotation_drain(ctx: Ctx) -> None:
    first = basic(ctx, "r0")  # signed by the key the instance started with
    old = ctx.rotate_key()
    p, q = basic(ctx, "r1"), basic(ctx, "r2")  # signed by old
    new = ctx.rotate_key()
    ctx.expect(new != old, "token.rotation.drain", "a new key id", new,
               "rotate_key answered the key id it had answered before")
    ctx.resume(first, YES, clause_id="token.rotation.drain")  # two rotations later

    def retire_refused(kid: str, codes: list[E], what: str) -> None:
        ctx.expect_refused(ctx.retire_key_raw(kid), codes, "token.rotation.drain", what)

    retire_refused(old, [E.KEY_NOT_DRAINED],
                   "retiring a key while two pauses it signed are outstanding")
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.expect_phase(q, "resumable", "lifecycle.refusal.no-change")
    ctx.resume(p, YES, clause_id="token.rotation.drain")
    retire_refused(old, [E.KEY_NOT_DRAINED],
                   "retiring a key while one pause it signed is still outstanding")
    s = basic(ctx, "r3")  # signed by new: no concern of old's drain
    ctx.resume(q, YES, clause_id="token.rotation.drain")
    ctx.retire_key(old)
    ctx.refuse_resume(p, [E.TOKEN_INVALID], "resume.token.authentic",
                      "a replay presenting a token of the retired key, no longer in the ring")
    ctx.expect_phase(p, "consumed", "lifecycle.refusal.no-change")
    retire_refused(old, [E.KEY_UNKNOWN], "retiring a key already retired")
    retire_refused("no-such-key", [E.KEY_UNKNOWN], "retiring a key id never in the ring")
    retire_refused(new, [E.KEY_NOT_DRAINED],
                   "retiring the signing key while a pause it signed is outstanding")
    ctx.resume(s, YES, clause_id="token.rotation.drain")
    retire_refused(new, [E.KEY_NOT_DRAINED],
                   "retiring the signing key (it keeps signing, so it is never drained)")
    ctx.expect_count("r3", "b", 1, "resume.continuation.recorded-turn")


@check("tokens/payload-private",
       "a token discloses nothing of its payload: neither its text nor an unkeyed digest of it",
       ["token.discloses"])
def _payload_private(ctx: Ctx) -> None:
    secret = {"amount": 7342, "to": "acct-17-zq"}
    rep = ctx.start([ask("approve", secret), end()], "r1")
    p = only(rep.pauses, ctx, "pause.published")[0]
    seen = [p.token]
    for part in p.token.split("."):
        try:
            seen.append(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
                        .decode("utf-8", "replace"))
        except ValueError:
            continue
    texts = {json.dumps(secret, sort_keys=True, separators=(",", ":")),
             json.dumps(secret, separators=(",", ":")), json.dumps(secret),
             json.dumps(secret, sort_keys=True)}
    digests = {h(t.encode()).hexdigest() for t in texts
               for h in (hashlib.sha256, hashlib.sha512, hashlib.sha1, hashlib.md5)}
    for text in seen:
        ctx.expect("acct-17-zq" not in text, "token.discloses", "no payload text",
                   text[:200], "the token carries the payload in the clear")
        leaked = [d for d in digests if d in text.lower()]
        ctx.expect(not leaked, "token.discloses", "no unkeyed payload digest", leaked,
                   "the token carries an unkeyed digest of its payload: anyone can confirm a "
                   "guess of the payload offline")
    ctx.resume(p, YES, clause_id="token.discloses")
