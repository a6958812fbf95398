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
  WorkspaceSymbolRequest, FoldingRangeRequest, SelectionRangeRequest, DeclarationRequest, TypeDefinitionRequest,
  CallHierarchyPrepareRequest, CallHierarchyIncomingCallsRequest, CallHierarchyOutgoingCallsRequest,
  DocumentDiagnosticRequest, CompletionRequest, InlayHintRequest,
} from "vscode-languageserver-protocol";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const server = process.env.ARGUS_LSP ?? path.join(repo, "build", "argus-lsp");
const examplePath = path.join(repo, "examples", "broken", "typo.ag");
const uri = pathToFileURL(path.join(tmpdir(), "argus-node-client", "typo.ag")).href;
const TIMEOUT_MS = 30000;

let child;
let connection;
let capabilities;
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
    processId: process.pid, rootUri: null, clientInfo: { name: "argus-node-test" },
    capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } } },
    initializationOptions: { pullDiagnostics: true },
  });
  capabilities = result.capabilities;
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

// The features clangd and rust-analyzer users expect, on a kernel with a device
// function and a pipelined loop (tests/lsp/calls.ag), then on a broken copy.
const callsText = readFileSync(path.join(repo, "tests", "lsp", "calls.ag"), "utf8");
const callsUri = pathToFileURL(path.join(tmpdir(), "argus-node-client", "calls.ag")).href;
const callsLine = (needle) => callsText.split("\n").findIndex((l) => l.includes(needle));
const at = (needle, offset = 0) => {
  const line = callsLine(needle);
  return { line, character: callsText.split("\n")[line].indexOf(needle) + offset };
};

async function openAndWait(docUri, docText, version = 1) {
  const published = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no diagnostics for ${docUri}`)), TIMEOUT_MS);
    const listener = (p) => {
      if (p.uri !== docUri) return;
      clearTimeout(timer);
      otherDocumentListeners.delete(listener);
      resolve(p);
    };
    otherDocumentListeners.add(listener);
  });
  await connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: docUri, languageId: "argus", version, text: docText },
  });
  return published;
}

test("the new features are advertised", () => {
  for (const key of ["workspaceSymbolProvider", "foldingRangeProvider", "selectionRangeProvider", "declarationProvider",
    "typeDefinitionProvider", "callHierarchyProvider", "diagnosticProvider", "inlayHintProvider"])
    assert.ok(capabilities[key], `${key} is not advertised: ${JSON.stringify(capabilities)}`);
});

test("workspace symbols, folding, selection, declaration and type definition", async () => {
  await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { argus: { arch: "sm_80", defines: {} } } });
  const published = await openAndWait(callsUri, callsText);
  assert.deepEqual(published.diagnostics.filter((d) => d.severity === 1), []);

  const symbols = await connection.sendRequest(WorkspaceSymbolRequest.type, { query: "scl" });
  const scale = symbols.find((s) => s.name === "scale" && s.location.uri === callsUri);
  assert.ok(scale, JSON.stringify(symbols));
  assert.equal(scale.location.range.start.line, callsLine("def scale"));
  assert.ok(!symbols.some((s) => s.name === "gemm"), "'scl' must not match gemm");

  const folds = await connection.sendRequest(FoldingRangeRequest.type, { textDocument: { uri: callsUri } });
  const fold = (a, b) => folds.some((f) => f.startLine === callsLine(a) && f.endLine === callsLine(b));
  assert.ok(fold("def gemm", "C.tile((BM, BN))[program_id(0)"), JSON.stringify(folds));
  assert.ok(fold("for kt in pipelined", "acc = dot("), JSON.stringify(folds));
  assert.ok(fold("else:", "scale(acc, 0.5)"), JSON.stringify(folds));

  const [selection] = await connection.sendRequest(SelectionRangeRequest.type, {
    textDocument: { uri: callsUri }, positions: [at("acc, 2.0", 1)],
  });
  const chain = [];
  for (let s = selection; s; s = s.parent) chain.push(s.range);
  assert.equal(chain[0].end.character - chain[0].start.character, 3, "innermost is the name acc");
  assert.ok(chain.length >= 5, JSON.stringify(chain));
  for (let i = 1; i < chain.length; i++) {
    const inner = chain[i - 1], outer = chain[i];
    const le = (a, b) => a.line < b.line || (a.line === b.line && a.character <= b.character);
    assert.ok(le(outer.start, inner.start) && le(inner.end, outer.end), `range ${i} does not contain ${i - 1}`);
  }

  const declaration = await connection.sendRequest(DeclarationRequest.type, { textDocument: { uri: callsUri }, position: at("scale(acc, 2.0)", 1) });
  const declared = Array.isArray(declaration) ? declaration[0] : declaration;
  assert.equal(declared.range.start.line, callsLine("def scale"));

  const typeDef = await connection.sendRequest(TypeDefinitionRequest.type, { textDocument: { uri: callsUri }, position: at("acc = scale(acc, 2.0)") });
  const typed = Array.isArray(typeDef) ? typeDef[0] : typeDef;
  assert.equal(typed.range.start.line, callsLine("acc = zeros("), "acc's type comes from zeros(...)");
});

test("call hierarchy over the device function and the kernel", async () => {
  const [item] = await connection.sendRequest(CallHierarchyPrepareRequest.type, { textDocument: { uri: callsUri }, position: at("def scale", 5) });
  assert.equal(item.name, "scale");
  assert.equal(item.detail, "@device");
  const incoming = await connection.sendRequest(CallHierarchyIncomingCallsRequest.type, { item });
  assert.equal(incoming.length, 1);
  assert.equal(incoming[0].from.name, "gemm");
  assert.deepEqual(incoming[0].fromRanges.map((r) => r.start.line), [callsLine("scale(acc, 2.0)"), callsLine("scale(acc, 0.5)")]);
  const [kernel] = await connection.sendRequest(CallHierarchyPrepareRequest.type, { textDocument: { uri: callsUri }, position: at("def gemm", 5) });
  const outgoing = await connection.sendRequest(CallHierarchyOutgoingCallsRequest.type, { item: kernel });
  assert.deepEqual(outgoing.map((c) => c.to.name), ["scale"]);
});

test("pull diagnostics, snippets and memory inlay hints", async () => {
  const report = await connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
  assert.equal(report.kind, "full");
  assert.ok(report.items.some((d) => d.code === "AG4003"), JSON.stringify(report.items));
  const again = await connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri }, previousResultId: report.resultId });
  assert.equal(again.kind, "unchanged");

  const completion = await connection.sendRequest(CompletionRequest.type, { textDocument: { uri: callsUri }, position: { line: callsLine("acc = dot("), character: 8 } });
  const items = Array.isArray(completion) ? completion : completion.items;
  const copyBulk = items.find((i) => i.label === "copy_bulk");
  assert.ok(copyBulk, "copy_bulk is completed");
  assert.equal(copyBulk.insertTextFormat, 2);
  assert.equal(copyBulk.insertText, "copy_bulk(${1:dst}, ${2:src})");
  assert.match(items.find((i) => i.label === "pipelined").insertText, /stages=\$\{2:/);

  const hints = await connection.sendRequest(InlayHintRequest.type, {
    textDocument: { uri: callsUri }, range: { start: { line: 0, character: 0 }, end: { line: callsText.split("\n").length, character: 0 } },
  });
  const labels = hints.map((h) => (typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join("")));
  assert.ok(labels.includes("4 KiB × 3 stages = 12 KiB"), JSON.stringify(labels));
  assert.ok(labels.includes("for kt + 2, stage (kt + 2) % 3"), JSON.stringify(labels));
  assert.ok(labels.some((l) => l.startsWith("layout #blocked")), JSON.stringify(labels));
});

test("the new features answer sensibly on a file with errors", async () => {
  const brokenUri = callsUri.replace("calls.ag", "calls_broken.ag");
  const broken = callsText.replace("acc = dot(a_s, b_s, acc)", "acc = dot(a_s, b_s,").replace("return t * factor", "return t *");
  await openAndWait(brokenUri, broken);
  const doc = { textDocument: { uri: brokenUri } };
  const folds = await connection.sendRequest(FoldingRangeRequest.type, doc);
  assert.ok(Array.isArray(folds));
  const [item] = await connection.sendRequest(CallHierarchyPrepareRequest.type, { ...doc, position: at("def scale", 5) });
  assert.equal(item.name, "scale");
  await connection.sendRequest(CallHierarchyIncomingCallsRequest.type, { item });
  const report = await connection.sendRequest(DocumentDiagnosticRequest.type, doc);
  assert.ok(report.items.length > 0, "the syntax errors are reported");
  for (const line of [0, callsLine("acc = dot("), callsLine("return t")]) {
    await connection.sendRequest(SelectionRangeRequest.type, { ...doc, positions: [{ line, character: 10 }] });
    await connection.sendRequest(TypeDefinitionRequest.type, { ...doc, position: { line, character: 8 } });
    await connection.sendRequest(CodeActionRequest.type, { ...doc, range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, context: { diagnostics: [] } });
  }
  await connection.sendRequest(InlayHintRequest.type, { ...doc, range: { start: { line: 0, character: 0 }, end: { line: 40, character: 0 } } });
});

// Applies a refactoring's edits and checks that the server accepts the result.
async function applyAndCheck(action, name) {
  const edits = action.edit.changes[callsUri];
  const result = applyEdits(callsText, edits);
  const resultUri = callsUri.replace("calls.ag", `${name}.ag`);
  const published = await openAndWait(resultUri, result);
  const errors = published.diagnostics.filter((d) => d.severity === 1);
  assert.deepEqual(errors.map((d) => `${d.code} ${d.message}`), [], `${name}:\n${result}`);
  return result;
}

test("refactor: extract the if/else into a device function, and inline scale at its call", async () => {
  const ifLine = callsLine("if BM > 32:");
  const endLine = callsLine("acc = scale(acc, 0.5)");
  const actions = await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: callsUri },
    range: { start: { line: ifLine, character: 4 }, end: { line: endLine, character: callsText.split("\n")[endLine].length } },
    context: { diagnostics: [] },
  });
  const extract = actions.find((a) => a.kind === "refactor.extract.function");
  assert.ok(extract, JSON.stringify(actions));
  const extracted = await applyAndCheck(extract, "extracted");
  assert.match(extracted, /@device\ndef extracted\(BM, acc\):\n    if BM > 32:\n        acc = scale\(acc, 2\.0\)\n/);
  assert.match(extracted, /\n    acc = extracted\(BM, acc\)\n/);
  assert.match(extracted, /    return acc\n/);

  // A selection that cuts a statement in half offers no extraction.
  const partial = await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: callsUri },
    range: { start: { line: ifLine, character: 4 }, end: { line: ifLine + 1, character: 12 } }, context: { diagnostics: [] },
  });
  assert.ok(!partial.some((a) => a.kind === "refactor.extract.function"), JSON.stringify(partial));

  const inline = (await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: callsUri }, range: { start: at("scale(acc, 2.0)", 2), end: at("scale(acc, 2.0)", 2) }, context: { diagnostics: [] },
  })).find((a) => a.kind === "refactor.inline");
  assert.ok(inline, "no inline action at the call of scale");
  const inlined = await applyAndCheck(inline, "inlined");
  assert.match(inlined, /\n        acc = acc \* 2\.0\n/);
});
