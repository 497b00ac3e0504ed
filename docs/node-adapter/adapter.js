// A complete small implementation of the pausepoint contract's core group in Node.js, with
// its adapter: no library, one file.  docs/implementers.md explains it step by step, and a
// test runs `pausepoint conform --adapter cmd:"node docs/node-adapter/adapter.js"` in CI.
//
// Claims only `core`: pauses are published, resumed exactly once from the recorded turn,
// refused in the contract's order with its error codes, and nothing runs twice.
"use strict";
const crypto = require("crypto");
const readline = require("readline");

// -- step 1: the protocol's three result shapes ------------------------------------------------
const ok = (data) => ({ status: "ok", data });
const refused = (code, message) => ({ status: "refused", code, message });
const skipped = (reason) => ({ status: "skipped", reason });

class Refusal extends Error {            // an ordinary error: user code's catch-all sees it
  constructor(code, message) { super(message); this.code = code; }
}
class PauseSignal {                      // NOT an Error: `catch (e) { if (e instanceof Error)`
  constructor(pause) { this.pause = pause; } // in user code lets it pass, as the contract asks
}

// -- step 2: the interactions and the bounds on what a person sends --------------------------
const INTERACTIONS = {
  approve: { answer: (r) => typeof r.approved === "boolean" }, // strict: "false" is no bool
  ask: {}, confirm: {}, choose: {},
  pay: { tool: true },                   // a tool pause: bound to a tool call id
  restricted: { responders: ["operator"] },
};
const MAX_BYTES = 65536, MAX_DEPTH = 32;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function depth(v) {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depth));
  if (v !== null && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depth));
  return 0;
}
function textOk(v) {
  if (typeof v === "string") return !LONE_SURROGATE.test(v);
  if (Array.isArray(v)) return v.every(textOk);
  if (v !== null && typeof v === "object") {
    return Object.entries(v).every(([k, x]) => !LONE_SURROGATE.test(k) && textOk(x));
  }
  return true;
}
// Canonical JSON (sorted keys): compares a repeated answer with the first one.
function canonical(v) {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (v !== null && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k]))
      .join(",") + "}";
  }
  return JSON.stringify(v);
}
function fits(v) {                       // the payload and response schema: a bounded object
  return v !== null && typeof v === "object" && !Array.isArray(v) && textOk(v)
    && depth(v) <= MAX_DEPTH && Buffer.byteLength(canonical(v)) <= MAX_BYTES;
}

// -- step 3: the state: runs, pauses, the world's effect counts, a clock -------------------------
let state;
function reset(ttl) {
  state = { ttl, now: 0, runs: new Map(), pauses: new Map(), tokens: new Map(), counts: {} };
}
reset(60000);

function apply(run, key) {               // a side effect in the world, counted
  const k = `${run.id}/${key}`;
  state.counts[k] = (state.counts[k] || 0) + 1;
}

// -- step 4: pause -- the ordered checks, then mint ----------------------------------------------
function pause(run, step) {
  const spec = INTERACTIONS[step.name];
  if (!spec) throw new Refusal("interaction_unregistered", `${step.name} is not registered`);
  if (!fits(step.payload)) throw new Refusal("payload_invalid", "the payload does not fit");
  if (step.checkpoint === "none") throw new Refusal("checkpoint_missing", "no checkpoint");
  if (spec.tool && !step.tool_call_id) {
    throw new Refusal("tool_call_id_missing", "a tool pause needs its tool call id");
  }
  const id = `${run.id}/${run.pc}`;
  const token = crypto.randomBytes(24).toString("base64url");   // opaque, unguessable
  const p = {
    interrupt_id: id, run_id: run.id, name: step.name, kind: "ask", payload: step.payload,
    token, tool_call_id: step.tool_call_id || "", expires_at: state.now + state.ttl,
    phase: "paused", resumeAt: run.pc + 1, answer: null, result: null,
  };
  state.pauses.set(id, p);
  state.tokens.set(token, p);
  // Record the turn: only a successful checkpoint write earns `resumable`.
  if (step.checkpoint_write !== "fail") p.phase = "resumable";
  return p;
}

// -- step 5: the runner -- execute steps; the pause signal ends the invocation ------------------
function execute(run) {
  const events = [];
  let refusal = null;
  try {
    while (run.pc < run.script.length) {
      const step = run.script[run.pc];
      if (step.op === "effect") {
        events.push("tool_call");
        apply(run, step.key);
        events.push("tool_result");
      } else if (step.op === "interrupt") {
        const h = step.handlers || {};
        try {                            // user code around the pause point
          throw new PauseSignal(pause(run, step));
        } catch (e) {
          if (!(e instanceof Error)) throw e;      // the pause signal passes the catch-all
          if (!h.catch_all) throw e;
          apply(run, h.catch_all);                 // an ordinary error: caught, run goes on
        } finally {
          if (h.cleanup) apply(run, h.cleanup);
        }
      } else if (step.op === "gate") {   // a policy decision, not an interrupt
        if (step.amount > step.deny_over) break;   // denied: the run ends done, here
        if (step.amount > step.allow_up_to) {      // neither: ask a person
          throw new PauseSignal(pause(run, { name: "approve", checkpoint_write: "ok",
            payload: { amount: step.amount, reason: `over ${step.allow_up_to}` } }));
        }
      } else if (step.op === "end") {
        run.pc = run.script.length;
        break;
      }
      run.pc += 1;
    }
    run.status = "done";
    events.push("done");
  } catch (e) {
    if (e instanceof PauseSignal) {      // the one place that catches it
      run.status = "paused";
      events.push("paused");
    } else if (e instanceof Refusal) {   // a refused pause: nothing published, still running
      run.status = "running";
      refusal = refused(e.code, e.message);
      events.push("error");
    } else {
      throw e;
    }
  }
  return report(run, events, refusal);
}

function report(run, events, refusal = null) {
  const live = [...state.pauses.values()].filter(
    (p) => p.run_id === run.id && ["paused", "resumable"].includes(p.phase));
  return {
    run_id: run.id, status: run.status, events, refusal,
    pauses: live.map((p) => ({
      interrupt_id: p.interrupt_id, run_id: p.run_id, name: p.name, kind: p.kind,
      payload: p.payload, token: p.token, resumable: p.phase === "resumable",
      expires_at: p.expires_at, tool_call_id: p.tool_call_id,
    })),
  };
}

// -- step 6: resume -- the ordered checks, consume once, continue from the recorded turn --------
function resume(a) {
  const p = state.tokens.get(a.token);
  if (!p) return refused("token_invalid", "no pause has this token");
  const run = state.runs.get(p.run_id);
  if (p.phase === "expired") return refused("pause_expired", "the pause expired");
  const allowed = INTERACTIONS[p.name].responders;
  if (allowed && !allowed.includes(a.responder)) {
    return refused("responder_unauthorized", `${a.responder} may not answer ${p.name}`);
  }
  const answerOk = INTERACTIONS[p.name].answer || (() => true);
  if (!fits(a.response) || !answerOk(a.response)) {
    return refused("response_invalid", "the response does not fit");
  }
  if (p.phase === "consumed") {          // decided once: the same answer replays, nothing runs
    if (canonical(a.response) !== p.answer) {
      return refused("response_conflict", "the pause was answered differently");
    }
    return ok({ replayed: true, interrupt_id: p.interrupt_id, run: report(run, []) });
  }
  if (p.phase !== "resumable") return refused("not_resumable", "the turn was never recorded");
  p.phase = "consumed";                  // the single-winner consume, then the continuation
  p.answer = canonical(a.response);
  run.pc = p.resumeAt;
  return ok({ replayed: false, interrupt_id: p.interrupt_id, run: execute(run) });
}

// -- step 7: the operations of the protocol ------------------------------------------------------
const UNSUPPORTED = { names: "multi-pause", fault: "durability" };
const handlers = {
  hello: (a) => a.protocol === 1
    ? ok({ implementation: { name: "pausepoint-node-example", version: "1.0.0",
                             language: "javascript" },
           protocol: 1, groups: ["core"], notes: "docs/implementers.md" })
    : refused("invalid_transition", `protocol ${a.protocol} is not supported`),
  reset: (a) => { reset(a.ttl_ms); return ok({}); },
  start: (a) => {
    for (const s of a.script) {
      for (const [field, group] of Object.entries(UNSUPPORTED)) {
        if (s[field] !== undefined && s[field] !== null) {
          return skipped(`${field} steps need the ${group} group, not claimed`);
        }
      }
    }
    if (state.runs.has(a.run_id)) {  // run.lifecycle.table: a run starts once
      return refused("invalid_transition", `run ${a.run_id} was already started`);
    }
    const run = { id: a.run_id, script: a.script, pc: 0, status: "running" };
    state.runs.set(run.id, run);
    return ok(execute(run));
  },
  resume,
  advance_clock: (a) => {
    state.now += a.ms;
    for (const p of state.pauses.values()) {
      if (["paused", "resumable"].includes(p.phase) && state.now >= p.expires_at) {
        p.phase = "expired";
      }
    }
    return ok({ now: state.now });
  },
  pause_state: (a) => {
    const p = state.pauses.get(a.interrupt_id);
    return p ? ok({ phase: p.phase }) : refused("pause_unknown", a.interrupt_id);
  },
  effect_count: (a) => ok({ count: state.counts[`${a.run_id}/${a.key}`] || 0 }),
  status: (a) => {                       // what a person is told: never plain "paused"
    const run = state.runs.get(a.run_id);
    if (!run) return refused("pause_unknown", `no run ${a.run_id}`);
    if (run.status !== "paused") return ok({ view: run.status });
    const live = report(run, []).pauses;
    return ok({ view: live.every((p) => p.resumable) ? "safely_suspended"
                                                      : "partially_complete" });
  },
  wiring: (a) => {                       // refuse a deployment that would fail later
    const unknown = a.interactions.filter((n) => !INTERACTIONS[n]);
    if (unknown.length) return refused("interaction_unregistered", unknown.join(", "));
    if (a.checkpoints === "durable" && a.ledger === "volatile") {
      return refused("wiring_invalid", "durable checkpoints need a durable ledger");
    }
    if (["encoder_only", "decoder_only"].includes(a.token_codec)) {
      return refused("wiring_invalid", "a token encoder needs its decoder");
    }
    return ok({ tools: a.interactions.length ? [{ name: "ask_user", asks_user: true }] : [] });
  },
  bye: () => ok({}),
};

// -- step 8: the message loop: one JSON request per line in, one response per line out ---------
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const req = JSON.parse(line);
  let result;
  try {
    const handler = handlers[req.op];
    result = handler ? handler(req.args) : skipped(`${req.op} is not offered (core only)`);
  } catch (e) {
    result = { status: "errored", traceback: String((e && e.stack) || e) };
  }
  process.stdout.write(JSON.stringify({ id: req.id, result }) + "\n");
  if (req.op === "bye") process.exit(0);
});
