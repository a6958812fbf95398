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
  assert.deepEqual(config.serverSettings({ target: "sm_80" }),
    { argus: { arch: "sm_80", target: "sm_80", defines: {}, inlayHints: { registers: true } } });
  assert.equal(config.serverSettings({ registerHints: false }).argus.inlayHints.registers, false);
  assert.equal(config.serverSettings({ target: "sm_90a" }).argus.arch, "sm_90a");
  assert.equal(config.serverSettings({ target: "sm_75" }).argus.arch, config.DEFAULT_TARGET);
  // Unset: the server uses the file's `# arch:` line, like argusc without --arch.
  assert.equal(config.serverSettings({}).argus.arch, "");
  assert.deepEqual(config.compilerFlags({}), []);
});

test("the default server is found on PATH, in ~/.local/bin or in the workspace build folder", () => {
  const finder = (existing) => ({ isExecutable: (p) => existing.includes(p), pathDirs: ["/usr/bin", "/opt/x/bin"], home: "/home/me" });
  const ws = "/home/me/argus";
  assert.deepEqual(config.locateServer({ workspaceFolder: ws }, finder(["/opt/x/bin/argus-lsp", "/home/me/argus/build/argus-lsp"])),
    { command: "/opt/x/bin/argus-lsp", args: [], foundIn: "PATH" });
  assert.equal(config.locateServer({ workspaceFolder: ws }, finder(["/home/me/.local/bin/argus-lsp"])).foundIn, "home");
  assert.deepEqual(config.locateServer({ workspaceFolder: ws }, finder(["/home/me/argus/build/argus-lsp"])),
    { command: "/home/me/argus/build/argus-lsp", args: [], foundIn: "workspace" });
  // An explicit setting is used as given.
  assert.equal(config.locateServer({ serverPath: "/opt/argus-lsp" }, finder([])).foundIn, "setting");
  const missing = config.locateServer({ workspaceFolder: ws }, finder([]));
  assert.equal(missing.command, undefined);
  assert.ok(missing.looked.includes("/home/me/argus/build/argus-lsp"));
  const message = config.notFoundMessage(missing.looked);
  assert.match(message, /scripts\/install\.sh/);
  assert.match(message, /argus\.server\.path/);
  assert.match(message, /cmake --build build --target argus-lsp/);
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
