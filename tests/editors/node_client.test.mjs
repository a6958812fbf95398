// Drives the real argus-lsp binary the way an editor does, through the JSON-RPC
// client libraries VS Code's own client is built on: initialize, open the broken
// example, wait for its diagnostics, hover, apply the quick fix, see it clear.
//
//   ARGUS_LSP=build/argus-lsp node --test tests/editors/node_client.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";
import { tmpdir } from "node:os";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import {
  InitializeRequest, InitializedNotification, DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification, DidChangeConfigurationNotification, PublishDiagnosticsNotification,
  HoverRequest, CodeActionRequest, ShutdownRequest, ExitNotification,
} from "vscode-languageserver-protocol";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const server = process.env.ARGUS_LSP ?? path.join(repo, "build", "argus-lsp");
const examplePath = path.join(repo, "examples", "broken", "typo.ag");
const uri = pathToFileURL(path.join(tmpdir(), "argus-node-client", "typo.ag")).href;
const TIMEOUT_MS = 30000;

let child;
let connection;
let stderr = "";
const published = []; // every publishDiagnostics for `uri`, in order
const waiters = [];
const otherDocumentListeners = new Set();
const protocolErrors = [];

function nextDiagnostics(predicate, what) {
  const found = published.find(predicate);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr}`)), TIMEOUT_MS);
    waiters.push({ predicate, resolve: (p) => { clearTimeout(timer); resolve(p); } });
  });
}

/** Applies LSP TextEdits (sorted back to front) to a text. */
function applyEdits(text, edits) {
  const lines = text.split("\n");
  const offset = (p) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  return text;
}

const text = readFileSync(examplePath, "utf8");
const lineOf = (needle) => text.split("\n").findIndex((l) => l.includes(needle));

before(async () => {
  assert.ok(existsSync(server), `argus-lsp not found at ${server} (set ARGUS_LSP)`);
  child = spawn(server, [], { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.on("data", (d) => { stderr += d; });
  // The connection's logger hears protocol faults such as a response to no pending
  // request (a duplicate) fail the test (ARGUS_E2E_LENIENT=1 only reports them).
  const logger = { error: (m) => protocolErrors.push(String(m)), warn: (m) => protocolErrors.push(String(m)), info() {}, log() {} };
  connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin), logger);
  // One handler per method (a second onNotification would replace this one).
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    for (const listener of [...otherDocumentListeners]) listener(params);
    if (params.uri !== uri) return;
    published.push(params);
    for (const w of waiters.splice(0)) {
      if (w.predicate(params)) w.resolve(params); else waiters.push(w);
    }
  });
  connection.listen();
  const result = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid, rootUri: null, capabilities: {}, clientInfo: { name: "argus-node-test" },
  });
  assert.ok(result.capabilities.hoverProvider, "server must advertise hover");
  assert.ok(result.capabilities.codeActionProvider, "server must advertise code actions");
  await connection.sendNotification(InitializedNotification.type, {});
});

after(async () => {
  if (!connection) return;
  try {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
  } finally {
    const code = await new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      const timer = setTimeout(() => { child.kill("SIGKILL"); resolve("killed"); }, 5000);
      child.on("exit", (c) => { clearTimeout(timer); resolve(c); });
    });
    connection.dispose();
    assert.equal(code, 0, "shutdown + exit must end the server with status 0");
    if (protocolErrors.length > 0) {
      const message = `protocol errors seen by the client: ${protocolErrors.join("; ").slice(0, 400)}`;
      assert.equal(process.env.ARGUS_E2E_LENIENT, "1", message);
      console.log(`# WARNING: ${message}`);
    }
  }
});

test("didOpen publishes AG3001 for the typo with its range", async () => {
  await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { argus: { arch: "sm_80", defines: {} } } });
  await connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "argus", version: 1, text },
  });
  const params = await nextDiagnostics((p) => p.diagnostics.length > 0, "diagnostics");
  const typo = params.diagnostics.find((d) => d.code === "AG3001");
  assert.ok(typo, JSON.stringify(params.diagnostics));
  assert.match(typo.message, /unknown name 'laod'/);
  const line = lineOf("laod(");
  assert.equal(typo.range.start.line, line);
  assert.equal(typo.range.start.character, text.split("\n")[line].indexOf("laod"));
  assert.equal(typo.range.end.character - typo.range.start.character, 4);
  assert.equal(typo.severity, 1);
  assert.equal(typo.source, "argus");
  assert.match(typo.codeDescription?.href ?? "", /AG3001/);
});

test("hover on a parameter and on a builtin", async () => {
  const line = lineOf("i = program_id(0)");
  const onName = await connection.sendRequest(HoverRequest.type, {
    textDocument: { uri }, position: { line, character: text.split("\n")[line].indexOf("i =") },
  });
  assert.ok(onName, "hover on 'i' returned nothing");
  const nameText = typeof onName.contents === "string" ? onName.contents : onName.contents.value;
  assert.match(nameText, /\bi\b/);
  assert.match(nameText, /i32/);

  const builtin = await connection.sendRequest(HoverRequest.type, {
    textDocument: { uri }, position: { line, character: text.split("\n")[line].indexOf("program_id") + 2 },
  });
  assert.ok(builtin, "hover on 'program_id' returned nothing");
  assert.match(typeof builtin.contents === "string" ? builtin.contents : builtin.contents.value, /program_id/);
});

test("the quick fix replaces laod with load, and applying it clears AG3001", async () => {
  const params = await nextDiagnostics((p) => p.diagnostics.some((d) => d.code === "AG3001"), "AG3001");
  const typo = params.diagnostics.find((d) => d.code === "AG3001");
  const actions = await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri }, range: typo.range, context: { diagnostics: [typo], only: ["quickfix"] },
  });
  assert.ok(Array.isArray(actions) && actions.length > 0, "no code action");
  const fix = actions.find((a) => a.kind === "quickfix" && /load/.test(a.title));
  assert.ok(fix, JSON.stringify(actions));
  assert.equal(fix.isPreferred, true);
  const edits = fix.edit.changes?.[uri] ?? fix.edit.documentChanges?.[0]?.edits;
  assert.ok(edits?.length, "the quick fix has no edits for the document");
  const fixed = applyEdits(text, edits);
  assert.ok(fixed.includes("b = load(y.tile"), fixed);
  assert.ok(!fixed.includes("laod"));

  // Send the edit back incrementally, as an editor does after applying it.
  published.length = 0;
  await connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: edits.map((e) => ({ range: e.range, text: e.newText })),
  });
  const after = await nextDiagnostics(() => true, "diagnostics after the fix");
  assert.ok(!after.diagnostics.some((d) => d.code === "AG3001"), JSON.stringify(after.diagnostics));
});

test("defines sent with didChangeConfiguration reach the analysis", async () => {
  const before = await nextDiagnostics((p) => !p.diagnostics.some((d) => d.code === "AG3001"), "diagnostics after the fix");
  assert.ok(before.diagnostics.some((d) => d.code === "AG4003"), `BLOCK = 1000 should be reported: ${JSON.stringify(before.diagnostics)}`);
  published.length = 0;
  // The payload the VS Code extension sends (editors/vscode/src/config.ts serverSettings).
  await connection.sendNotification(DidChangeConfigurationNotification.type, {
    settings: { argus: { arch: "sm_90a", target: "sm_90a", defines: { BLOCK: "1024" } } },
  });
  const cleared = await nextDiagnostics((p) => p.diagnostics.length === 0, "no diagnostics with -D BLOCK=1024");
  assert.deepEqual(cleared.diagnostics, []);
});

test("an unsupported target is refused without losing the document", async () => {
  published.length = 0;
  await connection.sendNotification(DidChangeConfigurationNotification.type, {
    settings: { argus: { arch: "sm_75", defines: { BLOCK: "1000" } } },
  });
  const params = await nextDiagnostics((p) => p.diagnostics.some((d) => d.code === "AG4003"), "AG4003 back with -D BLOCK=1000");
  assert.ok(params.diagnostics.length > 0);
  const hover = await connection.sendRequest(HoverRequest.type, {
    textDocument: { uri }, position: { line: lineOf("i = program_id(0)"), character: 4 },
  });
  assert.ok(hover, "the document is still served");
});

// Expands a snippet body with its default placeholder text, as VS Code does when
// the user only tabs through it: ${1:name} -> name, and a later $1 -> name.
function expandSnippet(body) {
  const defaults = new Map();
  let text = body.join("\n");
  for (let changed = true; changed;) {
    changed = false;
    text = text.replace(/\$\{(\d+):([^{}$]*)\}/g, (_, n, value) => {
      changed = true;
      if (!defaults.has(n)) defaults.set(n, value);
      return defaults.get(n);
    });
    text = text.replace(/\$\{(\d+):\$(\d+)\}/g, (_, n, ref) => { changed = true; return `\${${n}:${defaults.get(ref) ?? ""}}`; });
  }
  return text.replace(/\$\{?(\d+)\}?/g, (_, n) => defaults.get(n) ?? "");
}

test("the VS Code snippets expand to programs the server accepts", async () => {
  const snippets = JSON.parse(readFileSync(path.join(repo, "editors", "vscode", "snippets", "argus.json"), "utf8"));
  const indent = (s) => s.split("\n").map((l) => (l ? "    " + l : l)).join("\n");
  const kernelAround = (body, tail = "") =>
    "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)\n" +
    "def k(A: Tensor[f32, (M, K)], B: Tensor[f32, (K, N)], C: Tensor[f32, (M, N)],\n" +
    "      BM: const = 64, BN: const = 64, BK: const = 16, STAGES: const = 2):\n" +
    indent(body) + "\n" + tail;
  const programs = {
    "Kernel": expandSnippet(snippets["Kernel"].body) + "\n",
    "Device function": expandSnippet(snippets["Device function"].body) +
      "\n\n@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)]):\n    x.tile((16,))[0] = name(load(x.tile((16,))[0]))\n",
    "Pipelined loop": kernelAround(expandSnippet(snippets["Pipelined loop"].body)),
    "GEMM step (dot)": kernelAround(expandSnippet(snippets["GEMM step (dot)"].body),
      "    C.tile((BM, BN))[program_id(0), program_id(1)] = acc\n"),
  };
  assert.deepEqual(Object.keys(programs).sort(), Object.keys(snippets).sort(), "every snippet is checked");
  // The defines of the previous test would apply to these documents too.
  await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { argus: { arch: "sm_90", defines: {} } } });
  let version = 1;
  for (const [name, program] of Object.entries(programs)) {
    assert.ok(!program.includes("$"), `${name}: unexpanded placeholder in\n${program}`);
    const snippetUri = pathToFileURL(path.join(tmpdir(), "argus-node-client", `snippet${version}.ag`)).href;
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: snippetUri, languageId: "argus", version: version++, text: program },
    });
    const params = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no diagnostics for the ${name} snippet`)), TIMEOUT_MS);
      const listener = (p) => {
        if (p.uri !== snippetUri) return;
        clearTimeout(timer);
        otherDocumentListeners.delete(listener);
        resolve(p);
      };
      otherDocumentListeners.add(listener);
    });
    const errors = params.diagnostics.filter((d) => d.severity === 1);
    assert.deepEqual(errors.map((d) => `${d.code} ${d.message}`), [], `${name} snippet:\n${program}`);
  }
});
