// Tokenizes sample lines with the real TextMate engine VS Code uses
// (vscode-textmate + vscode-oniguruma) and checks the scopes of key tokens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const require = createRequire(import.meta.url);
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
const onigLib = oniguruma.loadWASM(wasm).then(() => ({
  createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
  createOnigString: (s) => new oniguruma.OnigString(s),
}));
const grammarPath = path.join(root, "syntaxes", "argus.tmLanguage.json");
const registry = new vsctm.Registry({
  onigLib,
  loadGrammar: async (scopeName) =>
    scopeName === "source.argus" ? vsctm.parseRawGrammar(readFileSync(grammarPath, "utf8"), grammarPath) : null,
});
const grammarPromise = registry.loadGrammar("source.argus");

/** Returns [text, innermost scope] for every token of `line`. */
async function tokenize(line) {
  const grammar = await grammarPromise;
  const { tokens } = grammar.tokenizeLine(line, vsctm.INITIAL);
  return tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]]);
}

async function scopeOf(line, text) {
  const tokens = await tokenize(line);
  const hit = tokens.find(([t]) => t.trim() === text);
  assert.ok(hit, `no token '${text}' in ${JSON.stringify(tokens)}`);
  return hit[1];
}

test("decorators and kernel names", async () => {
  const line = "@kernel(grid=(cdiv(N, BLOCK),), warps=4)";
  assert.equal(await scopeOf(line, "@"), "punctuation.definition.decorator.argus");
  assert.equal(await scopeOf(line, "kernel"), "entity.name.function.decorator.argus");
  assert.equal(await scopeOf(line, "cdiv"), "support.function.builtin.argus");
  assert.equal(await scopeOf(line, "4"), "constant.numeric.integer.argus");
  assert.equal(await scopeOf("@device", "device"), "entity.name.function.decorator.argus");
});

test("def, dtypes, Tensor and const", async () => {
  const line = "def vadd(x: Tensor[f32, (N,)], BLOCK: const = 1024):";
  assert.equal(await scopeOf(line, "def"), "storage.type.function.argus");
  assert.equal(await scopeOf(line, "vadd"), "entity.name.function.argus");
  assert.equal(await scopeOf(line, "Tensor"), "support.type.argus");
  assert.equal(await scopeOf(line, "f32"), "support.type.dtype.argus");
  assert.equal(await scopeOf(line, "const"), "storage.modifier.argus");
  for (const dt of ["bf16", "f8e4m3", "u64", "bool"]) {
    assert.equal(await scopeOf(`x = cast(y, ${dt})`, dt), "support.type.dtype.argus");
  }
});

test("keywords and language constants", async () => {
  assert.equal(await scopeOf("for kt in range(4):", "for"), "keyword.control.argus");
  assert.equal(await scopeOf("for kt in range(4):", "in"), "keyword.operator.logical.argus");
  assert.equal(await scopeOf("for kt in range(4):", "range"), "support.function.builtin.argus");
  assert.equal(await scopeOf("    elif a and not b:", "elif"), "keyword.control.argus");
  assert.equal(await scopeOf("    return v", "return"), "keyword.control.argus");
  assert.equal(await scopeOf("x = True", "True"), "constant.language.argus");
  assert.equal(await scopeOf("t = load(v, other=-inf)", "inf"), "constant.language.argus");
});

test("builtins only when called; names stay plain", async () => {
  assert.equal(await scopeOf("acc = dot(a_s, b_s, acc)", "dot"), "support.function.builtin.argus");
  assert.equal(await scopeOf("    barrier()", "barrier"), "support.function.builtin.argus");
  assert.equal(await scopeOf("    copy_async(a_s, v)", "copy_async"), "support.function.builtin.argus");
  assert.equal(await scopeOf("for kt in pipelined(n, stages=3):", "pipelined"), "support.function.builtin.argus");
  assert.equal(await scopeOf("        copy_bulk(a_s, v)", "copy_bulk"), "support.function.builtin.argus");
  assert.equal(await scopeOf("    acc = zeros(f32, (64, 64), layout=wgmma(warpgroups=1))", "wgmma"), "support.function.builtin.argus");
  assert.equal(await scopeOf("y = gelu(x)", "gelu"), "entity.name.function.call.argus");
  // `sum` as a plain variable name is not a call.
  assert.equal(await scopeOf("s = sum", "sum"), "source.argus");
  // A misspelt builtin is an ordinary call, not a builtin.
  assert.equal(await scopeOf("b = laod(y)", "laod"), "entity.name.function.call.argus");
});

test("numbers", async () => {
  for (const [text, scope] of [
    ["1_000", "constant.numeric.integer.argus"],
    ["0x80", "constant.numeric.hex.argus"],
    ["0b101", "constant.numeric.binary.argus"],
    ["1.0", "constant.numeric.float.argus"],
    [".5", "constant.numeric.float.argus"],
    ["1e-3", "constant.numeric.float.argus"],
    ["2.5E+4", "constant.numeric.float.argus"],
  ]) {
    assert.equal(await scopeOf(`x = ${text}`, text), scope, text);
  }
  // Digits inside a name are not a number.
  assert.equal(await scopeOf("x = f32", "f32"), "support.type.dtype.argus");
});

test("strings, escapes and comments", async () => {
  const tokens = await tokenize('require(N <= BN, "a row \\n fits") # note');
  const scopes = Object.fromEntries(tokens.map(([t, s]) => [t, s]));
  assert.equal(scopes["a row "], "string.quoted.double.argus");
  assert.equal(scopes["\\n"], "constant.character.escape.argus");
  assert.equal(scopes[" note"], "comment.line.number-sign.argus");
  assert.equal(await scopeOf("s = 'x'", "x"), "string.quoted.single.argus");
  // A `#` inside a string does not start a comment.
  const inString = await tokenize('m = "# not a comment"');
  assert.ok(inString.every(([, s]) => !s.startsWith("comment")), JSON.stringify(inString));
});

test("operators", async () => {
  for (const [op, scope] of [
    ["//", "keyword.operator.arithmetic.argus"],
    ["**", "keyword.operator.arithmetic.argus"],
    ["<<", "keyword.operator.arithmetic.argus"],
    ["//=", "keyword.operator.assignment.augmented.argus"],
    ["+=", "keyword.operator.assignment.augmented.argus"],
    ["==", "keyword.operator.comparison.argus"],
    ["<=", "keyword.operator.comparison.argus"],
    ["=", "keyword.operator.assignment.argus"],
  ]) {
    assert.equal(await scopeOf(`x ${op} y`, op), scope, op);
  }
  assert.equal(await scopeOf("def f(a) -> f32:", "->"), "punctuation.separator.annotation.result.argus");
});

test("every example tokenizes with no unscoped identifier keyword", async () => {
  const examples = path.join(root, "..", "..", "examples");
  const files = readdirSync(examples).filter((f) => f.endsWith(".ag"));
  assert.ok(files.length > 0);
  for (const f of files) {
    for (const line of readFileSync(path.join(examples, f), "utf8").split("\n")) {
      for (const [text, scope] of await tokenize(line)) {
        if (["def", "for", "in", "return", "if"].includes(text.trim())) {
          assert.notEqual(scope, "source.argus", `${f}: '${text}' unscoped in: ${line}`);
        }
      }
    }
  }
});
