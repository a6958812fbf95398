#!/usr/bin/env python3
"""Runs build/bench/compile_bench and writes bench/results/compile.json and compile_gbench.md
(the per-example before/after table, bench/results/compile.md, is bench/compile_phases.py's).

    python3 bench/compile_report.py   (after bash scripts/build.sh)
"""
import json
import os
import platform
import statistics
import subprocess
import time
import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
BENCH = os.path.join(ROOT, "build", "bench", "compile_bench")
ARGUSC = os.path.join(ROOT, "build", "argusc")

GOALS = {
    "compile_to_ptx/gemm": "< 100 ms (Triton 3.6: 0.53 s for one GEMM variant)",
    "parse_sema/5000_lines": "< 200 ms",
    "check/gemm": "< 0.5 s",
}
WHAT = {"compile_to_ptx": "source to PTX, in process", "check": "source through the checker",
        "parse_sema": "parse + sema, generated 5,065-line file"}


def main():
    bench_cmd = [BENCH, "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
                 "--benchmark_format=json"]
    data = json.loads(subprocess.run(bench_cmd, check=True, capture_output=True, text=True).stdout)
    with open(os.path.join(RESULTS, "compile.json"), "w") as f:
        json.dump(data, f, indent=1)
    walls = []
    for _ in range(15):
        start = time.perf_counter()
        subprocess.run([ARGUSC, os.path.join(ROOT, "examples", "gemm.ag"), "-o", "/tmp/argus_bench_gemm.ptx"],
                       check=True)
        walls.append((time.perf_counter() - start) * 1000)
    lines = [
        "# Compile-time benchmarks", "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; "
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} when it ran",
        "- build: Release (`bash scripts/build.sh`); command: `python3 bench/compile_report.py`, which runs "
        "`build/bench/compile_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true` (raw: compile.json)",
        "- the process row: `build/argusc examples/gemm.ag -o FILE`, median wall time of 15 runs (process start, "
        "LLVM initialisation, checker, codegen, PTX written)", "",
        "| benchmark | what | median wall | median CPU | goal |", "| --- | --- | --- | --- | --- |"]
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        lines.append(f"| {name} | {WHAT.get(name.split('/')[0], '')} | {b['real_time']:.2f} ms | "
                     f"{b['cpu_time']:.2f} ms | {GOALS.get(name, '')} |")
    lines.append(f"| argusc examples/gemm.ag | the whole process | {statistics.median(walls):.1f} ms | | < 100 ms |")
    with open(os.path.join(RESULTS, "compile_gbench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
