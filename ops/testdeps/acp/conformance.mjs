// ACP conformance of `zuno acp`, driven by the official TypeScript client SDK
// (@agentclientprotocol/sdk): initialize, session/new, a scripted prompt whose tool call asks
// permission (answered by this client), a plan update, a prompt cancelled while its permission
// request waits, a delegated child's report, and session/load in a second process, whose
// replayed history must be the history the first connection saw live. The SDK validates every
// message the agent sends against the protocol's schema.
//
// Run by faces/acp's TestConformanceTypeScriptSDK with ZUNO_BIN (the built binary) and
// WORKSPACE (the session's directory, holding the scripted model and a zuno.json that makes
// edits ask). It prints one JSON object, what it saw, for the Go test to hold against the log.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const bin = process.env.ZUNO_BIN;
const ws = process.env.WORKSPACE;
assert.ok(bin && ws, "ZUNO_BIN and WORKSPACE are required");
const real = realpathSync(ws); // the workspace as the log records it

// connect starts `zuno acp` and a client whose handlers record what the agent sends.
function connect(onPermission) {
  const child = spawn(bin, ["acp"], { cwd: ws, stdio: ["pipe", "pipe", "inherit"], env: process.env });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const updates = [];
  const app = acp.client({ name: "zuno-conformance" })
    .onRequest("session/request_permission", (cx) => onPermission(cx))
    .onNotification("session/update", (cx) => {
      updates.push(cx.params.update);
    });
  return { child, stream, app, updates };
}

// text is the agent's text among updates, chunks joined.
const text = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");

// coalesce joins consecutive agent_message_chunk updates (a streamed text arrives in pieces live,
// in one chunk on load) and drops plan updates (live: after each plan change; on load: the
// current plan, last), so two histories compare as what they show.
function coalesce(us) {
  const out = [];
  for (const u of us) {
    if (u.sessionUpdate === "plan") continue;
    const last = out[out.length - 1];
    if (u.sessionUpdate === "agent_message_chunk" && last && last.sessionUpdate === "agent_message_chunk") {
      last.content = { ...last.content, text: last.content.text + u.content.text };
      continue;
    }
    out.push(structuredClone(u));
  }
  return out;
}

const asked = [];
let permissionMode = "answer";
const first = connect(async (cx) => {
  asked.push(cx.params);
  if (permissionMode === "answer") {
    const ids = cx.params.options.map((o) => o.optionId);
    assert.deepEqual(ids, ["once", "always", "reject"], "a write's ask offers once, always and reject");
    assert.equal(cx.params.toolCall.kind, "edit");
    return { outcome: { outcome: "selected", optionId: "once" } };
  }
  // The cancelled prompt: the request stays open until the agent withdraws it.
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("the permission request was never withdrawn")), 20000);
    cx.signal.addEventListener("abort", () => { clearTimeout(t); resolve(); });
  });
  return { outcome: { outcome: "cancelled" } };
});

const seen = { prompts: [] };
await first.app.connectWith(first.stream, async (cx) => {
  const init = await cx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "zuno-conformance", version: "1" },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.deepEqual(init.authMethods, []);
  await cx.request("authenticate", { methodId: "none" }).catch(() => {}); // no method is offered: either answer is fine

  const s = await cx.request("session/new", { cwd: ws, mcpServers: [] });
  assert.match(s.sessionId, /^ses_[0-9a-f]+$/);
  assert.equal(s.modes.currentModeId, "build");
  assert.deepEqual(s.modes.availableModes.map((m) => m.id), ["build", "deep", "orchestrator", "plan"]);
  seen.sessionId = s.sessionId;

  const run = async (prompt, expectStop) => {
    const from = first.updates.length;
    const res = await cx.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: prompt }] });
    assert.equal(res.stopReason, expectStop, `stop reason of ${prompt}`);
    const us = first.updates.slice(from);
    seen.prompts.push({ prompt, stopReason: res.stopReason, updates: us });
    return us;
  };

  // 1. A tool call that asks permission, answered once by this client.
  let us = await run("Write the greeting", "end_turn");
  const call = us.find((u) => u.sessionUpdate === "tool_call");
  assert.ok(call, "a tool_call update");
  assert.equal(call.kind, "edit");
  assert.equal(call.status, "pending");
  assert.deepEqual(call.locations, [{ path: `${real}/greeting.txt` }]);
  assert.deepEqual(call.content, [{ type: "diff", path: `${real}/greeting.txt`, newText: "hello\n" }]);
  const statuses = us.filter((u) => u.toolCallId === call.toolCallId).map((u) => u.status);
  assert.deepEqual(statuses, ["pending", "in_progress", "completed"]);
  assert.equal(asked.length, 1, "one permission request");
  assert.equal(asked[0].toolCall.toolCallId, call.toolCallId);
  assert.match(text(us), /Wrote greeting\.txt\./);

  // 2. A plan change streams the durable Plan.
  us = await run("Plan the release", "end_turn");
  const plan = us.filter((u) => u.sessionUpdate === "plan").at(-1);
  assert.ok(plan, "a plan update");
  assert.deepEqual(plan.entries.map((e) => [e.content, e.status]), [["Tag", "pending"], ["Publish", "pending"]]);
  seen.plan = plan;

  // 3. Cancellation: the prompt waits on a permission request; session/cancel stops the turn.
  permissionMode = "hold";
  const from = first.updates.length;
  const cancelled = cx.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "Overwrite everything" }] });
  while (asked.length < 2) await new Promise((r) => setTimeout(r, 20));
  await cx.notify("session/cancel", { sessionId: s.sessionId });
  const res = await cancelled;
  assert.equal(res.stopReason, "cancelled");
  seen.prompts.push({ prompt: "Overwrite everything", stopReason: res.stopReason, updates: first.updates.slice(from) });
  permissionMode = "answer";

  // 4. Modes are the built-in agents; the orchestrator delegates, and the child's report
  // reaches the session as a user message carrying the typed report.
  await cx.request("session/set_mode", { sessionId: s.sessionId, modeId: "orchestrator" });
  await assert.rejects(cx.request("session/set_mode", { sessionId: s.sessionId, modeId: "explorer" }),
    (e) => e.code === -32602 && e.data.code === "unknown_agent");
  us = await run("Investigate in one lane", "end_turn");
  const report = us.find((u) => u.sessionUpdate === "user_message_chunk" && u._meta?.zuno?.kind === "task_report");
  if (!report) console.error(JSON.stringify(us, null, 1));
  assert.ok(report, "the child's report, with _meta.zuno.kind task_report");
  assert.equal(report._meta.zuno.taskReport.status, "completed");
  assert.equal(report._meta.zuno.taskReport.agent, "explorer");
  assert.equal(report._meta.zuno.taskReport.finalText, "Lexer: tokens end at lexer.go:41.");
  seen.taskReport = report._meta.zuno.taskReport;

  // Out of order: a prompt for a session this connection never opened.
  await assert.rejects(cx.request("session/prompt", { sessionId: "ses_unknown", prompt: [{ type: "text", text: "x" }] }),
    (e) => e.code === -32002 && e.data.code === "session_not_open");
});
first.child.kill("SIGTERM");
await new Promise((r) => first.child.on("exit", r));

// 5. session/load in a new process replays the history from the log.
const second = connect(() => { throw new Error("a load asks nothing"); });
await second.app.connectWith(second.stream, async (cx) => {
  await cx.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const loaded = await cx.request("session/load", { sessionId: seen.sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, "orchestrator", "the mode is the agent of the last turn the user started");
});
second.child.kill("SIGTERM");

const replay = second.updates;
// What the first connection saw, with the user's own prompts (the client sent them, so the
// live stream does not echo them; the replay shows them).
const expected = [];
for (const p of seen.prompts) {
  expected.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: p.prompt } });
  expected.push(...p.updates);
}
const strip = (us) => coalesce(us).map((u) => {
  if (u.sessionUpdate === "user_message_chunk" && !u._meta) delete u.messageId;
  return u;
});
const got = strip(replay).map((u) => {
  if (u.sessionUpdate === "user_message_chunk" && !u._meta) delete u.messageId;
  return u;
});
assert.deepEqual(got, strip(expected), "the replayed history is the history seen live");
assert.deepEqual(replay.filter((u) => u.sessionUpdate === "plan").at(-1), seen.plan, "the replay ends with the current plan");
seen.replay = replay;
process.stdout.write(JSON.stringify(seen) + "\n");
