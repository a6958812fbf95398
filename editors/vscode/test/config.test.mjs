// The settings -> server command and didChangeConfiguration mapping (compiled out/config.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const config = require("../out/config.js");

test("server command defaults to argus-lsp on PATH", () => {
  assert.deepEqual(config.serverCommand({}), { command: "argus-lsp", args: [] });
  assert.deepEqual(config.serverCommand({ serverPath: "  ", serverArgs: "nope" }), { command: "argus-lsp", args: [] });
});

test("server path and args are passed through; junk args dropped", () => {
  assert.deepEqual(
    config.serverCommand({ serverPath: "/opt/argus/bin/argus-lsp", serverArgs: ["--debounce-ms=50", 7, "", "--workers=2"] }),
    { command: "/opt/argus/bin/argus-lsp", args: ["--debounce-ms=50", "--workers=2"] },
  );
});

test("target is validated and sent as arch", () => {
  assert.deepEqual(config.serverSettings({ target: "sm_80" }), { argus: { arch: "sm_80", target: "sm_80", defines: {} } });
  assert.equal(config.serverSettings({ target: "sm_90a" }).argus.arch, "sm_90a");
  assert.equal(config.serverSettings({ target: "sm_75" }).argus.arch, config.DEFAULT_TARGET);
  assert.equal(config.serverSettings({}).argus.arch, "sm_90");
});

test("defines from an object or from -D style strings", () => {
  assert.deepEqual(config.normalizeDefines({ BM: 64, SCALE: 0.5, FAST: true, NAME: "x" }),
    { BM: "64", SCALE: "0.5", FAST: "true", NAME: "x" });
  assert.deepEqual(config.normalizeDefines(["BM=64", " BN = 32 ", "bad", "=1", "1X=2"]), { BM: "64", BN: "32" });
  assert.deepEqual(config.normalizeDefines({ "not a name": 1, OBJ: { a: 1 }, ARR: [1] }), {});
  assert.deepEqual(config.normalizeDefines(null), {});
  assert.deepEqual(config.normalizeDefines(undefined), {});
});

test("compiler flags mirror argusc", () => {
  assert.deepEqual(config.compilerFlags({ target: "sm_80", defines: { BM: 32 } }), ["--arch=sm_80", "-D", "BM=32"]);
});

test("relative server paths and ${workspaceFolder} resolve against the workspace", () => {
  const ws = "/home/me/argus";
  assert.equal(config.serverCommand({ serverPath: "build/argus-lsp", workspaceFolder: ws }).command, "/home/me/argus/build/argus-lsp");
  assert.equal(config.serverCommand({ serverPath: "${workspaceFolder}/build/argus-lsp", workspaceFolder: ws }).command,
    "/home/me/argus/build/argus-lsp");
  assert.equal(config.serverCommand({ serverPath: "argus-lsp", workspaceFolder: ws }).command, "argus-lsp");
  assert.equal(config.serverCommand({ serverPath: "/abs/argus-lsp", workspaceFolder: ws }).command, "/abs/argus-lsp");
  assert.equal(config.serverCommand({ serverPath: "build/argus-lsp" }).command, "build/argus-lsp");
});
