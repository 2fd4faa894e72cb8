// The editor's file system, served by the official TypeScript client SDK
// (@agentclientprotocol/sdk): a client that offers fs.readTextFile and fs.writeTextFile (and a
// terminal, which must never be used) keeps its files in unsaved buffers. A prompt reads a
// file the buffer has changed, writes it, and reads it again; the SDK validates every message
// the agent sends, its fs requests included, against the protocol's schema.
//
// Run by faces/acp's TestEditorFileSystemTypeScriptSDK with ZUNO_BIN and WORKSPACE. It prints
// one JSON object, what it saw, for the Go test to hold against the log and the disk.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const bin = process.env.ZUNO_BIN;
const ws = process.env.WORKSPACE;
assert.ok(bin && ws, "ZUNO_BIN and WORKSPACE are required");

const buffers = { [`${ws}/a.txt`]: "unsaved in the editor\n" };
const requests = [];
const updates = [];
const child = spawn(bin, ["acp"], { cwd: ws, stdio: ["pipe", "pipe", "inherit"], env: process.env });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const app = acp.client({ name: "zuno-fs" })
  .onRequest("fs/read_text_file", (cx) => {
    requests.push({ method: "fs/read_text_file", ...cx.params });
    const content = buffers[cx.params.path];
    if (content === undefined) throw acp.RequestError.resourceNotFound(cx.params.path);
    return { content };
  })
  .onRequest("fs/write_text_file", (cx) => {
    requests.push({ method: "fs/write_text_file", ...cx.params });
    buffers[cx.params.path] = cx.params.content;
    return {};
  })
  .onRequest("terminal/create", (cx) => {
    requests.push({ method: "terminal/create", ...cx.params });
    throw new Error("the agent must not run commands in the editor's terminal");
  })
  .onRequest("session/request_permission", () => ({ outcome: { outcome: "selected", optionId: "reject" } }))
  .onNotification("session/update", (cx) => {
    updates.push(cx.params.update);
  });

const seen = {};
await app.connectWith(stream, async (cx) => {
  await cx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: "zuno-fs", version: "1" },
  });
  const s = await cx.request("session/new", { cwd: ws, mcpServers: [] });
  seen.sessionId = s.sessionId;
  const res = await cx.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "edit a.txt in the editor" }] });
  assert.equal(res.stopReason, "end_turn");
});
child.kill("SIGTERM");
await new Promise((r) => child.on("exit", r));

seen.requests = requests;
seen.buffers = buffers;
seen.updates = updates;
process.stdout.write(JSON.stringify(seen) + "\n");
