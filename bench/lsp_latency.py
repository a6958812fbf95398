#!/usr/bin/env python3
"""Latency of argus-lsp as an editor sees it, measured over the real binary's stdio.

    python3 bench/lsp_latency.py [--server build/argus-lsp] [--rounds 40] [--out bench/results]

For each example kernel and a generated 3,000-line file:
  - didChange -> publishDiagnostics of that version (the whole pipeline the
    editor waits for: lex, parse, sema, Tile IR, checker, rendering);
  - hover and completion request -> response.
The server runs with --debounce-ms=0 so the figures are the analysis itself;
an editor session adds the debounce delay (200 ms by default) on top of the
diagnostics latency while the user is still typing. Reported, never asserted.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    def __init__(self, path):
        self.proc = subprocess.Popen([path, "--debounce-ms=0"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == rid and "method" not in m:
                return m

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri, version):
        while True:
            m = self.read()
            if (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                    and m["params"].get("version") == version):
                return m

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=10)


def generated_file(lines_wanted=3000):
    kernel = []
    text = ""
    k = 0
    while text.count("\n") < lines_wanted:
        kernel = [
            "@kernel(grid=(cdiv(N, BLOCK),), warps=4)",
            f"def k{k}(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], s: f32, BLOCK: const = 256):",
            "    i = program_id(0)",
            "    a = load(x.tile((BLOCK,))[i])",
        ]
        kernel += [f"    a = a * s + {j}.0" for j in range(24)]
        kernel += ["    y.tile((BLOCK,))[i] = a", "", ""]
        text += "\n".join(kernel)
        k += 1
    return text


def position_of(text, needle, offset_in_needle=0):
    index = text.index(needle) + offset_in_needle
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return {"line": line, "character": column}


def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def measure(server, name, text, rounds):
    uri = f"file:///bench/{name}.ag"
    server.notify("textDocument/didOpen",
                  {"textDocument": {"uri": uri, "languageId": "argus", "version": 1, "text": text}})
    server.wait_diagnostics(uri, 1)
    diag, hover, completion = [], [], []
    # A name to hover (the first assignment's target) and a place to complete (start of that line).
    hover_at = position_of(text, "    i = program_id(0)", 4) if "    i = program_id(0)" in text \
        else position_of(text, "program_id", 0)
    complete_at = position_of(text, "program_id", 0)
    version = 1
    for r in range(rounds):
        version += 1
        edited = text + f"\n# edit {r}\n"
        start = time.perf_counter()
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": edited}]})
        server.wait_diagnostics(uri, version)
        diag.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": hover_at})
        hover.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        server.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": complete_at})
        completion.append((time.perf_counter() - start) * 1000)
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    row = {"document": name, "lines": text.count("\n") + 1, "rounds": rounds}
    for label, values in (("diagnostics", diag), ("hover", hover), ("completion", completion)):
        row[f"{label}_p50_ms"] = round(statistics.median(values), 2)
        row[f"{label}_p95_ms"] = round(percentile(values, 0.95), 2)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "argus-lsp"))
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = parser.parse_args()
    documents = []
    for name in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if name.endswith(".ag"):
            with open(os.path.join(ROOT, "examples", name)) as f:
                documents.append((name[:-3], f.read()))
    documents.append(("generated_3000_lines", generated_file()))

    server = Server(args.server)
    server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    server.notify("initialized", {})
    rows = [measure(server, name, text, args.rounds) for name, text in documents]
    server.close()

    command = "python3 bench/lsp_latency.py " + " ".join(sys.argv[1:])
    load = os.getloadavg()[0]
    header = [
        "# argus-lsp latency", "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
        f"- command: `{command.strip()}` (Release build, server started with `--debounce-ms=0`)",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} when it ran",
        "- diagnostics: didChange (full text) -> publishDiagnostics of that version: lex, parse, sema, Tile IR,"
        " checker and rendering; an editor adds the debounce (200 ms by default) while the user types",
        "- hover / completion: request -> response on the same document", "",
        "| document | lines | diagnostics p50 | p95 | hover p50 | p95 | completion p50 | p95 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        header.append(f"| {r['document']} | {r['lines']} | {r['diagnostics_p50_ms']} ms | {r['diagnostics_p95_ms']} ms | "
                      f"{r['hover_p50_ms']} ms | {r['hover_p95_ms']} ms | {r['completion_p50_ms']} ms | "
                      f"{r['completion_p95_ms']} ms |")
    header += ["", "Goals (issue 4): diagnostics p95 under 50 ms on the examples (checker included), "
               "hover and completion p95 under 20 ms."]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "lsp_latency.md"), "w") as f:
        f.write("\n".join(header) + "\n")
    with open(os.path.join(args.out, "lsp_latency.json"), "w") as f:
        json.dump({"command": command.strip(), "rows": rows}, f, indent=2)
    print("\n".join(header))


if __name__ == "__main__":
    main()
