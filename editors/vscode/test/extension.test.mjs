// The compiled client (out/extension.js) driven with stand-ins for the `vscode`
// module and vscode-languageclient, which only exist inside VS Code: checks
// how the server is started and when configuration is pushed or the server restarted.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import Module from "node:module";

const require = createRequire(import.meta.url);

let settings;
let configListeners;
let clients;
let errors;

class FakeLanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, notifications: [], running: false, stopped: false });
    clients.push(this);
  }
  async start() {
    if (this.serverOptions.run.command === "/missing/argus-lsp") throw new Error("spawn ENOENT");
    this.running = true;
  }
  isRunning() { return this.running; }
  async stop() {
    // Like the real client, stopping one that never started may throw.
    if (!this.running) throw new Error("Client is not running and can't be stopped");
    this.running = false;
    this.stopped = true;
  }
  async sendNotification(method, params) { this.notifications.push({ method, params }); }
}

const fakeVscode = {
  workspace: {
    getConfiguration: (section) => {
      assert.equal(section, "argus");
      return { get: (key) => settings[key] };
    },
    onDidChangeConfiguration: (listener) => { configListeners.push(listener); return { dispose() {} }; },
  },
  window: {
    createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
    showErrorMessage: async (message) => { errors.push(message); },
  },
  commands: { registerCommand: (name, fn) => ({ name, fn, dispose() {} }) },
};
const fakeClientModule = { LanguageClient: FakeLanguageClient, TransportKind: { stdio: 0, ipc: 1 } };

const originalLoad = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === "vscode") return fakeVscode;
  if (request === "vscode-languageclient/node") return fakeClientModule;
  return originalLoad.call(this, request, parent, isMain);
};
const extension = require("../out/extension.js");

function context() { return { subscriptions: [] }; }
const change = (...sections) => ({ affectsConfiguration: (s) => sections.some((x) => x === s || x.startsWith(s + ".")) });

beforeEach(() => {
  settings = { "server.path": "/opt/argus/argus-lsp", "server.args": ["--debounce-ms=20"], target: "sm_80", defines: { BM: 64 } };
  configListeners = [];
  clients = [];
  errors = [];
});

test("activate starts argus-lsp over stdio with the configured path and arguments", async () => {
  const ctx = context();
  await extension.activate(ctx);
  assert.equal(clients.length, 1);
  const [client] = clients;
  assert.deepEqual(client.serverOptions.run, { command: "/opt/argus/argus-lsp", args: ["--debounce-ms=20"], transport: 0 });
  assert.deepEqual(client.clientOptions.documentSelector.map((s) => s.language), ["argus", "argus"]);
  assert.deepEqual(client.clientOptions.initializationOptions,
    { arch: "sm_80", target: "sm_80", defines: { BM: "64" }, inlayHints: { registers: true } });
  assert.ok(client.running);
  assert.deepEqual(client.notifications, [{
    method: "workspace/didChangeConfiguration",
    params: { settings: { argus: { arch: "sm_80", target: "sm_80", defines: { BM: "64" }, inlayHints: { registers: true } } } },
  }]);
  assert.ok(ctx.subscriptions.some((s) => s.name === "argus.restartServer"));
  await extension.deactivate();
  assert.ok(client.stopped);
});

test("changing the target or defines is pushed to the running server", async () => {
  await extension.activate(context());
  const [client] = clients;
  settings.target = "sm_90a";
  settings.defines = ["BN=32"];
  await configListeners[0](change("argus.target"));
  assert.equal(clients.length, 1, "no restart for a target change");
  assert.deepEqual(client.notifications.at(-1).params.settings.argus,
    { arch: "sm_90a", target: "sm_90a", defines: { BN: "32" }, inlayHints: { registers: true } });
  settings["inlayHints.registers"] = false;
  await configListeners[0](change("argus.inlayHints"));
  assert.equal(client.notifications.at(-1).params.settings.argus.inlayHints.registers, false);
  await configListeners[0](change("editor.fontSize"));
  assert.equal(client.notifications.length, 3, "unrelated settings are ignored");
  await extension.deactivate();
});

test("changing the server path restarts the server", async () => {
  await extension.activate(context());
  settings["server.path"] = "/other/argus-lsp";
  await configListeners[0](change("argus.server.path"));
  assert.equal(clients.length, 2);
  assert.ok(clients[0].stopped);
  assert.equal(clients[1].serverOptions.run.command, "/other/argus-lsp");
  await extension.deactivate();
});

test("a server that cannot start is reported to the user", async () => {
  settings["server.path"] = "/missing/argus-lsp";
  await extension.activate(context());
  assert.equal(errors.length, 1);
  assert.match(errors[0], /\/missing\/argus-lsp/);
  assert.match(errors[0], /argus\.server\.path/);
  await extension.deactivate(); // must not throw
  // Fixing the path and restarting works.
  settings["server.path"] = "/opt/argus/argus-lsp";
  await configListeners[0](change("argus.server.path"));
  assert.ok(clients.at(-1).running);
  await extension.deactivate();
});
