// package.json contributions point at files that exist and agree with each other and with the code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const readJson = (rel) => JSON.parse(readFileSync(path.join(root, rel), "utf8"));
const config = createRequire(import.meta.url)("../out/config.js");

test("engine and client versions", () => {
  assert.equal(pkg.engines.vscode, "^1.91.0");
  assert.match(pkg.dependencies["vscode-languageclient"], /^(9\.0\.1|11\.)/);
  // Debian 12 ships Node 18: vsce 3 needs Node 20, and so does cheerio 1.1+ (through undici 7:
  // "ReferenceError: File is not defined"). vsce 2.32 with cheerio held at 1.0.0 runs on both.
  assert.equal(pkg.devDependencies["@vscode/vsce"], "2.32.0");
  assert.equal(pkg.overrides?.cheerio, "1.0.0");
  assert.ok(pkg.devDependencies["@types/vscode"].startsWith("1.91"), "types must not be newer than the engine");
});

test("language argus for *.ag with its configuration", () => {
  const [lang] = pkg.contributes.languages;
  assert.equal(lang.id, "argus");
  assert.deepEqual(lang.extensions, [".ag"]);
  const lc = readJson(lang.configuration);
  assert.equal(lc.comments.lineComment, "#");
  assert.deepEqual(lc.brackets, [["(", ")"], ["[", "]"], ["{", "}"]]);
  const increase = new RegExp(lc.indentationRules.increaseIndentPattern);
  assert.ok(increase.test("def f(x):"));
  assert.ok(increase.test("    for i in range(4):  # loop"));
  assert.ok(!increase.test("    x = a  # note: not a block"));
  assert.ok(!increase.test("    y = t[0]"));
  assert.ok(new RegExp(lc.indentationRules.decreaseIndentPattern).test("    else:"));
  assert.ok(lc.onEnterRules.some((r) => r.action.indent === "indent" && new RegExp(r.beforeText).test("if x:")));
});

test("grammar scope and file agree", () => {
  const [g] = pkg.contributes.grammars;
  assert.equal(g.language, "argus");
  const grammar = readJson(g.path);
  assert.equal(grammar.scopeName, g.scopeName);
  for (const p of grammar.patterns) {
    const name = p.include.slice(1);
    assert.ok(grammar.repository[name], `missing repository entry ${name}`);
  }
});

test("snippets: kernel, pipelined loop, dot/mma step, device function", () => {
  const snippets = readJson(pkg.contributes.snippets[0].path);
  const prefixes = Object.values(snippets).flatMap((s) => [s.prefix].flat());
  for (const p of ["kernel", "pipeline", "mma", "dot", "device"]) assert.ok(prefixes.includes(p), p);
  for (const [name, s] of Object.entries(snippets)) {
    assert.ok(Array.isArray(s.body) && s.body.length > 0, name);
    for (const line of s.body) assert.ok(!line.includes("\t"), `${name}: indent with spaces`);
  }
});

test("settings: path, args, target, defines", () => {
  const props = pkg.contributes.configuration.properties;
  assert.deepEqual(Object.keys(props).sort(),
    ["argus.defines", "argus.inlayHints.registers", "argus.server.args", "argus.server.path", "argus.target"]);
  assert.equal(props["argus.inlayHints.registers"].default, true);
  // "" first: the file's `# arch:` line, as argusc without --arch (the default).
  assert.deepEqual(props["argus.target"].enum, ["", ...config.TARGETS]);
  assert.equal(props["argus.target"].default, config.DEFAULT_TARGET);
  assert.equal(props["argus.target"].enumDescriptions.length, props["argus.target"].enum.length);
  assert.equal(props["argus.server.path"].default, "argus-lsp");
  assert.equal(props["argus.defines"].type, "object");
});

test("entry point and packaging", () => {
  assert.equal(pkg.main, "./out/extension.js");
  assert.ok(existsSync(path.join(root, "out", "extension.js")), "run tsc first");
  const ignore = readFileSync(path.join(root, ".vscodeignore"), "utf8");
  assert.match(ignore, /^src\/\*\*$/m);
  assert.match(ignore, /node_modules\/@vscode\/vsce\/\*\*/);
  const gitignore = readFileSync(path.join(root, ".gitignore"), "utf8");
  assert.match(gitignore, /\*\.vsix/);
  for (const c of pkg.contributes.commands) assert.ok(readFileSync(path.join(root, "src", "extension.ts"), "utf8").includes(`"${c.command}"`));
});
