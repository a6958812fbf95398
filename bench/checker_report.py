#!/usr/bin/env python3
"""Runs checker_bench and writes bench/results/checker.{json,md}.

    python3 bench/checker_report.py [BUILD_DIR] [--runs N]

BUILD_DIR defaults to build/ (Release, `bash scripts/build.sh`); the bench is
`BUILD_DIR/bench/checker_bench`. The goal: checker::check under 0.5 s for the
GEMM example.
"""
import datetime
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
GOAL_MS = {"gemm": 500.0}


def build_type(build_dir):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    return line.split("=", 1)[1].strip() or "(none)"
    except OSError:
        pass
    return "unknown"


def main():
    args = sys.argv[1:]
    runs = 21
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    build_dir = os.path.abspath(args[0]) if args else os.path.join(ROOT, "build")
    bench = os.path.join(build_dir, "bench", "checker_bench")
    raw = os.path.join(RESULTS, "checker.json")
    cmd = [bench, "--runs", str(runs), "--json", raw]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with open(raw) as f:
        data = json.load(f)
    rel = lambda p: os.path.relpath(p, ROOT)
    lines = [
        "# Checker benchmark", "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} when it ran",
        f"- build: {build_type(build_dir)} (`{rel(build_dir)}`); command: "
        f"`python3 bench/checker_report.py {rel(build_dir)} --runs {runs}`, which runs "
        f"`{rel(bench)} --runs {runs} --json bench/results/checker.json`",
        "- what: `checker::check` alone on the Tile IR (parse and sema outside the timing), median and minimum of "
        f"{runs} runs; then the median of each phase run on its own: shared-memory synchronization "
        "(AG2001-AG2004), async copies (AG2005-), tags (AG2010-), built-in invariants (AG2030-: bounds, "
        "budget, bank conflicts, registers)",
        "- goal: under 0.5 s for the GEMM example", "",
        "| group | kernel | checker::check median | min | sync | async | tags | invariants | diagnostics | goal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in data["kernels"]:
        if k["skipped"]:
            lines.append(f"| {k['group']} | {k['name']} | (sema rejects it) | | | | | | | |")
            continue
        goal = ""
        if k["group"] == "example" and k["name"] in GOAL_MS:
            ok = k["check_median_ms"] < GOAL_MS[k["name"]]
            goal = f"< {GOAL_MS[k['name']]:.0f} ms: {'met' if ok else 'NOT met'}"
        phases = " | ".join(f"{k[p + '_median_ms']:.3f} ms" for p in ("sync", "async", "tags", "invariants"))
        lines.append(f"| {k['group']} | {k['name']} | {k['check_median_ms']:.3f} ms | {k['check_min_ms']:.3f} ms | "
                     f"{phases} | {k['diagnostics']} | {goal} |")
    with open(os.path.join(RESULTS, "checker.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
