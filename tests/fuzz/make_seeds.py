#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/README.md).

  pipeline/  every .ag file of examples/ and tests/golden/, and the deep inputs
             of gen_deep_inputs.py at sizes around the limits
  lsp/       the client messages of each tests/lsp/*.lsp conversation (one
             JSON body per line, "@file:PATH" strings replaced by the file),
             and for each example a session that opens it, edits it and asks
             for every feature; one of them also in framed form
             (Content-Length headers), which the target feeds to the transport

usage: make_seeds.py OUT_DIR      (run from the repository root)
"""
import glob
import json
import os
import shutil
import subprocess
import sys


def replace_files(value):
    if isinstance(value, str) and value.startswith("@file:"):
        with open(value[6:]) as f:
            return f.read()
    if isinstance(value, list):
        return [replace_files(v) for v in value]
    if isinstance(value, dict):
        return {k: replace_files(v) for k, v in value.items()}
    return value


def conversation_lines(path):
    lines = []
    with open(path) as f:
        for line in f:
            if not line.startswith(">>> "):
                continue
            body = line[4:].rstrip("\n")
            try:
                body = json.dumps(replace_files(json.loads(body)), separators=(",", ":"))
            except ValueError:
                pass  # malformed on purpose: kept as written
            lines.append(body)
    return lines


def message(method, params, id=None):
    m = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        m["id"] = id
    return json.dumps(m, separators=(",", ":"))


def session(uri, text):
    doc = {"uri": uri}
    pos = {"line": 5, "character": 8}
    out = [message("initialize", {"capabilities": {}}, 1), message("initialized", {}),
           message("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "argus", "version": 1, "text": text}})]
    requests = [
        ("textDocument/hover", {"textDocument": doc, "position": pos}),
        ("textDocument/definition", {"textDocument": doc, "position": pos}),
        ("textDocument/references", {"textDocument": doc, "position": pos, "context": {"includeDeclaration": True}}),
        ("textDocument/documentHighlight", {"textDocument": doc, "position": pos}),
        ("textDocument/completion", {"textDocument": doc, "position": pos}),
        ("textDocument/signatureHelp", {"textDocument": doc, "position": pos}),
        ("textDocument/prepareRename", {"textDocument": doc, "position": pos}),
        ("textDocument/rename", {"textDocument": doc, "position": pos, "newName": "renamed"}),
        ("textDocument/documentSymbol", {"textDocument": doc}),
        ("textDocument/semanticTokens/full", {"textDocument": doc}),
        ("textDocument/inlayHint", {"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}),
        ("textDocument/codeAction", {"textDocument": doc, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}}),
        ("textDocument/formatting", {"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": True}}),
    ]
    for i, (method, params) in enumerate(requests):
        out.append(message(method, params, 10 + i))
    out.append(message("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 4}}, "text": "    x = 1\n"}]}))
    out.append(message("textDocument/hover", {"textDocument": doc, "position": pos}, 99))
    out.append(message("textDocument/didClose", {"textDocument": doc}))
    return out


def main():
    out = sys.argv[1]
    pipeline = os.path.join(out, "pipeline")
    lsp = os.path.join(out, "lsp")
    os.makedirs(pipeline, exist_ok=True)
    os.makedirs(lsp, exist_ok=True)
    sources = sorted(glob.glob("examples/**/*.ag", recursive=True) + glob.glob("tests/golden/**/*.ag", recursive=True))
    for path in sources:
        shutil.copy(path, os.path.join(pipeline, path.replace("/", "_")))
    deep = os.path.join(out, "deep")
    subprocess.run([sys.executable, "tests/fuzz/gen_deep_inputs.py", deep, "100", "300"], check=True)
    for path in sorted(glob.glob(os.path.join(deep, "*.ag"))):
        if os.path.getsize(path) < 16384:
            shutil.copy(path, os.path.join(pipeline, "deep_" + os.path.basename(path)))
    shutil.rmtree(deep)
    for path in sorted(glob.glob("tests/lsp/*.lsp")):
        with open(os.path.join(lsp, "conversation_" + os.path.basename(path)), "w") as f:
            f.write("\n".join(conversation_lines(path)) + "\n")
    for path in sorted(glob.glob("examples/*.ag")):
        with open(path) as f:
            lines = session("file:///work/" + os.path.basename(path), f.read())
        with open(os.path.join(lsp, "session_" + os.path.basename(path)), "w") as f:
            f.write("\n".join(lines) + "\n")
        if path.endswith("vadd.ag"):
            with open(os.path.join(lsp, "framed_session_vadd.ag"), "w") as f:
                for line in lines:
                    data = line.encode()
                    f.write(f"Content-Length: {len(data)}\r\n\r\n{line}")


if __name__ == "__main__":
    main()
