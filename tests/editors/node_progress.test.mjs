// The real argus-lsp binary, driven as an editor that shows server-initiated
// progress and re-reads inlay hints on request (VS Code's capabilities):
// a check's progress begins and ends around its diagnostics, ptxas's register
// counts arrive as inlay hints after the check, and for every target and -D
// value the published diagnostics are exactly those of the argusc binary.
//
//   ARGUS_LSP=build/argus-lsp ARGUSC=build/argusc node --test tests/editors/node_progress.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";
import { tmpdir } from "node:os";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import {
  InitializeRequest, InitializedNotification, DidOpenTextDocumentNotification, DidCloseTextDocumentNotification,
  DidChangeConfigurationNotification, PublishDiagnosticsNotification, ShutdownRequest, ExitNotification,
  InlayHintRequest, InlayHintRefreshRequest, WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const server = process.env.ARGUS_LSP ?? path.join(repo, "build", "argus-lsp");
const argusc = process.env.ARGUSC ?? path.join(repo, "build", "argusc");
const ptxas = "/usr/local/cuda/bin/ptxas";
const TIMEOUT_MS = 120000;

let child;
let connection;
let stderr = "";
const events = []; // every publish, progress and refresh, in arrival order
const listeners = new Set();
const openChecks = new Set(); // progress tokens begun and not ended

function record(event) {
  events.push(event);
  for (const listener of [...listeners]) listener(event);
}

/** Resolves with the first recorded event (past or future) that `predicate` accepts. */
function waitFor(predicate, what, from = 0) {
  const found = events.slice(from).find(predicate);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      listeners.delete(listener);
      reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr}`));
    }, TIMEOUT_MS);
    const listener = (event) => {
      if (!predicate(event)) return;
      clearTimeout(timer);
      listeners.delete(listener);
      resolve(event);
    };
    listeners.add(listener);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  assert.ok(existsSync(server), `argus-lsp not found at ${server} (set ARGUS_LSP)`);
  child = spawn(server, [], { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.on("data", (d) => { stderr += d; });
  connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => record({ kind: "publish", params }));
  connection.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
    record({ kind: "create", token: params.token });
    return null;
  });
  // Progress on a token the client did not register itself reaches this event
  // (vscode-jsonrpc routes $/progress by token).
  connection.onUnhandledProgress((params) => {
    if (params.value.kind === "begin") openChecks.add(params.token);
    if (params.value.kind === "end") openChecks.delete(params.token);
    record({ kind: "progress", token: params.token, value: params.value });
  });
  connection.onRequest(InlayHintRefreshRequest.type, () => {
    record({ kind: "refresh" });
    return null;
  });
  connection.listen();
  await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid, rootUri: null, clientInfo: { name: "argus-node-progress-test" },
    capabilities: { window: { workDoneProgress: true }, workspace: { inlayHint: { refreshSupport: true } } },
  });
  await connection.sendNotification(InitializedNotification.type, {});
});

after(async () => {
  if (!connection) return;
  await connection.sendRequest(ShutdownRequest.type);
  await connection.sendNotification(ExitNotification.type);
  await new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => { child.kill("SIGKILL"); resolve(); }, 5000);
    child.on("exit", () => { clearTimeout(timer); resolve(); });
  });
  connection.dispose();
});

let documents = 0;
function open(text) {
  const uri = pathToFileURL(path.join(tmpdir(), "argus-node-progress", `doc${++documents}.ag`)).href;
  connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "argus", version: 1, text },
  });
  return uri;
}

test("a check reports progress: created, begun, ended after its diagnostics", async () => {
  const from = events.length;
  const uri = open(readFileSync(path.join(repo, "examples", "gemm_pipelined.ag"), "utf8"));
  const create = await waitFor((e) => e.kind === "create", "window/workDoneProgress/create", from);
  const end = await waitFor((e) => e.kind === "progress" && e.token === create.token && e.value.kind === "end",
    "the check's progress to end", from);
  const mine = events.slice(from).filter((e) => e.kind === "progress" && e.token === create.token);
  assert.equal(mine[0].value.kind, "begin", JSON.stringify(mine));
  assert.match(mine[0].value.title, /Argus/);
  for (const report of mine.filter((e) => e.value.kind === "report")) {
    assert.ok(report.value.percentage >= 0 && report.value.percentage <= 100, JSON.stringify(report));
  }
  // The checker's diagnostics are published before the progress ends.
  const publishes = events.slice(from, events.indexOf(end)).filter((e) => e.kind === "publish" && e.params.uri === uri);
  assert.ok(publishes.length >= 2, `front end then checker: ${JSON.stringify(publishes.map((p) => p.params.diagnostics.length))}`);
  connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
});

test("ptxas's registers arrive as an inlay hint after the kernel's header", { skip: !existsSync(ptxas) && "no ptxas" }, async () => {
  const from = events.length;
  const text = readFileSync(path.join(repo, "examples", "softmax.ag"), "utf8");
  const uri = open(text);
  await waitFor((e) => e.kind === "refresh", "workspace/inlayHint/refresh", from);
  const hints = await connection.sendRequest(InlayHintRequest.type, {
    textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 40, character: 0 } },
  });
  const registers = hints.filter((h) => / registers/.test(typeof h.label === "string" ? h.label : ""));
  assert.equal(registers.length, 1, JSON.stringify(hints));
  const lines = text.split("\n");
  const header = lines.findIndex((l) => l.trimEnd().endsWith("BN: const = 1024):"));
  assert.deepEqual(registers[0].position, { line: header, character: lines[header].trimEnd().length });
  // What ptxas says for the same PTX, through argusc.
  const dir = mkdtempSync(path.join(tmpdir(), "argus-node-progress-"));
  const ptx = path.join(dir, "softmax.ptx");
  assert.equal(spawnSync(argusc, ["-o", ptx, path.join(repo, "examples", "softmax.ag")]).status, 0);
  const report = spawnSync(ptxas, ["-v", "-arch=sm_90", "-o", path.join(dir, "softmax.cubin"), ptx], { encoding: "utf8" });
  rmSync(dir, { recursive: true, force: true });
  const used = /Used (\d+) registers/.exec(report.stdout + report.stderr);
  assert.ok(used, report.stderr);
  assert.equal(registers[0].label, `${used[1]} registers`);
  connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
});

/** argusc's diagnostics for `file` with `flags`, as the fields an editor shows. */
function arguscDiagnostics(file, flags) {
  const run = spawnSync(argusc, ["--diagnostics-format=json", "-o", "/dev/null", ...flags, file], { encoding: "utf8" });
  const parsed = JSON.parse(run.stderr);
  return comparable(parsed.diagnostics);
}

function comparable(diagnostics) {
  return diagnostics
    .map((d) => JSON.stringify({ code: d.code, severity: d.severity, range: d.range, message: d.message }))
    .sort();
}

// Settings as the VS Code extension and the Neovim plugin send them, and the argusc flags they mean.
const cases = [
  { file: "gemm_wgmma.ag", settings: { target: "sm_80", defines: {} }, flags: ["--arch=sm_80"], codes: ["AG5001"] },
  { file: "gemm_wgmma.ag", settings: { target: "sm_90", defines: {} }, flags: ["--arch=sm_90"], codes: ["AG5020"] },
  { file: "gemm_wgmma.ag", settings: { target: "", defines: {} }, flags: [], codes: [] },
  { file: "softmax.ag", settings: { target: "", defines: { BN: "1000" } }, flags: ["-D", "BN=1000"], codes: ["AG4003"] },
  { file: "softmax.ag", settings: { target: "sm_80", defines: { BN: 2048, ROWS: 2 } }, flags: ["--arch=sm_80", "-D", "BN=2048", "-D", "ROWS=2"], codes: [] },
  { file: "softmax.ag", settings: { target: "", defines: { BN: "abc" } }, flags: ["-D", "BN=abc"], codes: ["AG0005"] },
  { file: "softmax.ag", settings: { target: "", defines: { NOPE: true } }, flags: ["-D", "NOPE=true"], codes: ["AG0006"] },
  { file: "softmax.ag", settings: { target: "", defines: { ROWS: 0 } }, flags: ["-D", "ROWS=0"], codes: ["AG3036", "AG4004"] },
  { file: "broken/typo.ag", settings: { target: "sm_90a", defines: { BLOCK: 1024 } }, flags: ["--arch=sm_90a", "-D", "BLOCK=1024"], codes: ["AG3001"] },
];

test("for every target and -D value, the diagnostics are argusc's", async () => {
  for (const c of cases) {
    const file = path.join(repo, "examples", c.file);
    const expected = arguscDiagnostics(file, c.flags);
    // The case means what it says: argusc reports exactly these codes.
    assert.deepEqual([...new Set(expected.map((d) => JSON.parse(d).code))].sort(), c.codes, `${c.file} ${c.flags.join(" ")}`);
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { argus: c.settings } });
    const from = events.length;
    const uri = open(readFileSync(file, "utf8"));
    // Settled: the last publish for the document matches, no check is running,
    // and nothing else arrives for a while.
    let last;
    for (const deadline = Date.now() + TIMEOUT_MS; Date.now() < deadline;) {
      const publishes = events.slice(from).filter((e) => e.kind === "publish" && e.params.uri === uri);
      last = publishes.at(-1);
      const count = events.length;
      await sleep(400);
      if (last && openChecks.size === 0 && events.length === count) break;
    }
    assert.ok(last, `${c.file} ${c.flags.join(" ")}: nothing published`);
    assert.deepEqual(comparable(last.params.diagnostics), expected, `${c.file} ${c.flags.join(" ")}`);
    connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }
});
