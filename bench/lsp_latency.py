#!/usr/bin/env python3
"""Latency of argus-lsp as an editor sees it, measured over the real binary's stdio.

    python3 bench/lsp_latency.py [--server build/argus-lsp] [--rounds 10] [--label after] [--out bench/results] [--subdirs]

For each example kernel (examples/*.ag; with --subdirs also examples/*/*.ag)
and a generated 3,000-line file, each
round makes four edits and times them from the didChange:
  - comment edit: a character typed inside the file's first comment ->
    the first publishDiagnostics of that version;
  - real edit: a statement added at the top of the first kernel (a new token
    every round) -> the first publishDiagnostics of that version (front end)
    and -> the checker's (the publish after which the server's check of that
    version ends; a server that checks before publishing has one publish);
  - hover right after a keystroke: a comment edit, then at once a hover ->
    its response; the same after a real edit.
The server runs with --debounce-ms=0 so the figures are the analysis itself (an
editor adds the debounce, 200 ms by default, while the user types). The client
advertises window.workDoneProgress and answers window/workDoneProgress/create,
so a server that reports its checks' progress is seen finishing them. Each
--label writes lsp_latency_LABEL.json and its section of lsp_latency.md (replaced if the label
is there, else appended; the rest of the file is kept).
Reported, never asserted.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    def __init__(self, path):
        # Unbuffered: the waits below ask select() whether a message is there, and select()
        # cannot see bytes already in a Python buffer (with bufsize=-1 a message that arrived
        # with the one before it was seen only after the 2 s timeout of wait_check_after).
        self.proc = subprocess.Popen([path, "--debounce-ms=0"], stdin=subprocess.PIPE, bufsize=0,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.checks_running = 0  # between window/workDoneProgress/create and the progress end
        self.checks_started = 0
        self.reports_progress = False

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
        body = b""
        while len(body) < length:  # an unbuffered read may return less
            chunk = self.proc.stdout.read(length - len(body))
            if not chunk:
                raise RuntimeError("the server closed its output")
            body += chunk
        message = json.loads(body)
        method = message.get("method")
        if method == "window/workDoneProgress/create":
            self.reports_progress = True
            self.checks_running += 1
            self.checks_started += 1
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "$/progress" and message["params"]["value"].get("kind") == "end":
            self.checks_running -= 1
        return message

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait_response(self, rid):
        while True:
            m = self.read()
            if m.get("id") == rid and "method" not in m:
                return m

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_first_diagnostics(self, uri, version):
        while True:
            m = self.read()
            if (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                    and m["params"].get("version") == version):
                return m

    def wait_settled(self, settle=0.05):
        """Until no check runs and nothing arrives for `settle` seconds."""
        import select
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], settle)
            if not ready and self.checks_running <= 0:
                return
            if ready or self.checks_running > 0:
                self.read()

    def wait_check_after(self, started_before, timeout=2.0):
        """Until a check started after `started_before` has ended (servers that report progress).
        Gives up after `timeout` seconds without any message when no check started (nothing to check)."""
        import select
        if not self.reports_progress:
            return
        while self.checks_started <= started_before or self.checks_running > 0:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready and self.checks_started <= started_before:
                return
            if ready or self.checks_running > 0:
                self.read()

    def close(self):
        rid = self.request("shutdown", None)
        self.wait_response(rid)
        self.notify("exit", None)
        self.proc.wait(timeout=30)


def generated_file(lines_wanted=3000):
    text = ""
    k = 0
    while text.count("\n") < lines_wanted:
        kernel = [
            "# a generated kernel",
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


def position_of(text, index):
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return {"line": line, "character": column}


def first_body_line(text):
    """The line index of the first kernel's first statement, and its indentation."""
    lines = text.split("\n")
    in_signature = False
    for i, line in enumerate(lines):
        if line.startswith("def "):
            in_signature = True
        if in_signature and re.search(r":\s*(#.*)?$", line):
            for j in range(i + 1, len(lines)):
                body = lines[j]
                if body.strip() and not body.lstrip().startswith("#"):
                    return j, body[:len(body) - len(body.lstrip())]
    raise ValueError("no kernel body")


def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Document:
    def __init__(self, server, name, text):
        self.server, self.uri, self.text, self.version = server, f"file:///bench/{name}.ag", text, 1
        self.comment_at = text.index("#") + 1
        self.body_line, self.indent = first_body_line(text)
        hover_name = re.search(r"[A-Za-z_]\w*", text.split("\n")[self.body_line])
        self.hover_column = hover_name.start() if hover_name else len(self.indent)

    def comment_edit(self):
        self._edit(self.comment_at, self.comment_at, "x")

    def real_edit(self, r):
        line_start = self._line_offset(self.body_line)
        self._edit(line_start, line_start, f"{self.indent}bench_{r} = {r}\n")
        self.body_line += 1

    def _line_offset(self, line):
        offset = 0
        for _ in range(line):
            offset = self.text.index("\n", offset) + 1
        return offset

    def _edit(self, start, end, new_text):
        before = self.text
        self.version += 1
        self.text = before[:start] + new_text + before[end:]
        rng = {"start": position_of(before, start), "end": position_of(before, end)}
        self.server.notify("textDocument/didChange", {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"range": rng, "text": new_text}]})

    def hover(self):
        return self.server.request("textDocument/hover", {
            "textDocument": {"uri": self.uri},
            "position": {"line": self.body_line, "character": self.hover_column}})


def ms(start):
    return (time.perf_counter() - start) * 1000


def measure(server, name, text, rounds):
    doc = Document(server, name, text)
    server.notify("textDocument/didOpen",
                  {"textDocument": {"uri": doc.uri, "languageId": "argus", "version": 1, "text": text}})
    server.wait_first_diagnostics(doc.uri, 1)
    server.wait_settled()
    series = {k: [] for k in ("comment", "real_first", "real_checked", "hover_comment", "hover_real")}
    for r in range(rounds):
        start = time.perf_counter()
        doc.comment_edit()
        server.wait_first_diagnostics(doc.uri, doc.version)
        series["comment"].append(ms(start))
        server.wait_settled()

        started = server.checks_started
        start = time.perf_counter()
        doc.real_edit(r)
        server.wait_first_diagnostics(doc.uri, doc.version)
        series["real_first"].append(ms(start))
        server.wait_check_after(started)
        series["real_checked"].append(ms(start))
        server.wait_settled()

        doc.comment_edit()
        start = time.perf_counter()
        server.wait_response(doc.hover())
        series["hover_comment"].append(ms(start))
        server.wait_settled()

        doc.real_edit(1000 + r)
        start = time.perf_counter()
        server.wait_response(doc.hover())
        series["hover_real"].append(ms(start))
        server.wait_settled()
    server.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})
    server.wait_settled()
    row = {"document": name, "lines": text.count("\n") + 1, "rounds": rounds}
    for label, values in series.items():
        row[f"{label}_p50_ms"] = round(statistics.median(values), 1)
        row[f"{label}_p95_ms"] = round(percentile(values, 0.95), 1)
    return row


def table(result):
    lines = [
        f"### {result['label']}", "",
        f"- date: {result['date']}; machine: {result['machine']}",
        f"- command: `{result['command']}` (server `{result['server']}`, started with `--debounce-ms=0`)", "",
        "| document | lines | comment edit -> diagnostics p50 / p95 | real edit -> first diagnostics p50 / p95 "
        "| real edit -> checker's diagnostics p50 / p95 | hover after a comment keystroke p50 / p95 "
        "| hover after a real keystroke p50 / p95 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        cells = [f"{r[k + '_p50_ms']} / {r[k + '_p95_ms']} ms"
                 for k in ("comment", "real_first", "real_checked", "hover_comment", "hover_real")]
        lines.append(f"| {r['document']} | {r['lines']} | " + " | ".join(cells) + " |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "argus-lsp"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--label", default="after")
    parser.add_argument("--only", default="", help="comma-separated document names (default: all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    parser.add_argument("--subdirs", action="store_true",
                        help="also the .ag files in examples/'s subdirectories (broken/, triton/, agent/), named DIR/NAME")
    args = parser.parse_args()
    documents = []
    examples = os.path.join(ROOT, "examples")
    names = [n for n in sorted(os.listdir(examples)) if n.endswith(".ag")]
    if args.subdirs:
        names += sorted(os.path.relpath(p, examples) for p in glob.glob(os.path.join(examples, "*", "*.ag")))
    for name in names:
        with open(os.path.join(examples, name)) as f:
            documents.append((name[:-3], f.read()))
    documents.append(("generated_3000_lines", generated_file()))
    if args.only:
        wanted = set(args.only.split(","))
        documents = [d for d in documents if d[0] in wanted]

    server = Server(args.server)
    rid = server.request("initialize", {"processId": None, "rootUri": None,
                                        "capabilities": {"window": {"workDoneProgress": True}}})
    server.wait_response(rid)
    server.notify("initialized", {})
    rows = []
    for name, text in documents:
        rows.append(measure(server, name, text, args.rounds))
        print(json.dumps(rows[-1]), flush=True)
    server.close()

    load = os.getloadavg()[0]
    result = {
        "label": args.label,
        "command": "python3 bench/lsp_latency.py " + " ".join(sys.argv[1:]),
        "server": os.path.relpath(os.path.abspath(args.server), ROOT),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} when it ended",
        "reports_progress": server.reports_progress,
        "rows": rows,
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"lsp_latency_{args.label}.json"), "w") as f:
        json.dump(result, f, indent=2)
    md_path = os.path.join(args.out, "lsp_latency.md")
    existing = open(md_path).read() if os.path.exists(md_path) else None
    with open(md_path, "w") as f:
        f.write(merge_section(existing, table(result)))
    print("\n".join(table(result)))


HEADER = ["# argus-lsp latency", "",
          "How long an editor waits, measured by `bench/lsp_latency.py` through the binary's pipes "
          "(see its docstring for the edits). Goals (issue 21): an edit inside comments or whitespace "
          "re-published in < 10 ms; p95 < 50 ms to the first diagnostics on every example; the checker's "
          "diagnostics as soon as they are ready.", ""]


def merge_section(existing, section):
    """The report with this label's section replaced, or appended when it is new. Every other
    section, and any text written by hand around them, stays as it was (a report re-rendered
    from the JSON files alone lost the runs whose JSON lives elsewhere, and their commentary)."""
    if existing is None:
        return "\n".join(HEADER + section) + "\n"
    lines = existing.rstrip("\n").split("\n")
    head = section[0]
    if head in lines:
        start = lines.index(head)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
        kept_after = lines[end:]
        lines = lines[:start] + section + ([""] + kept_after if kept_after else [])
    else:
        lines = lines + [""] + section
    return "\n".join(lines).rstrip("\n") + "\n"

if __name__ == "__main__":
    main()
