#!/usr/bin/env python3
"""Whole-compile time per example, before and after a change, and where it goes.

    python3 bench/compile_phases.py [--before ARGUSC_BEFORE] [--runs 3]

For each example: `argusc FILE -o OUT` (the whole process, at the arch of the
file's '# arch:' line), median of --runs runs, wall and CPU (user + sys) time,
for build/argusc and, when given, an older argusc; then
`build/bench/compile_bench --phases --repetitions=RUNS` (in process: parse,
sema, each checker analysis with its Z3 queries and resource units, lowering
with O3, the NVPTX backend). Writes bench/results/compile.md and compile_phases.json.
The machine is shared: the load average is recorded with the figures, and CPU
time is the steadier number when it is high.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")


def time_compile(argusc, path, runs, out):
    """Median wall and CPU ms of `argusc path -o out`; the PTX and the diagnostics of the last run."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([argusc, path, "-o", out], capture_output=True, text=True)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    with open(out, "rb") as f:
        ptx = f.read()
    return statistics.median(walls), statistics.median(cpus), ptx, done.stdout + done.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="an argusc built before the change")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phase-runs", type=int, default=3)
    args = parser.parse_args()
    argusc = os.path.join(ROOT, "build", "argusc")
    examples = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".ag"))
    load_start = os.getloadavg()[0]
    rows = []
    for name in examples:
        path = os.path.join(ROOT, "examples", name)
        row = {"example": name[:-3]}
        row["after_wall_ms"], row["after_cpu_ms"], ptx, diags = time_compile(argusc, path, args.runs,
                                                                             "/tmp/argus_phases_after.ptx")
        row["diagnostics"] = diags.strip()
        if args.before:
            row["before_wall_ms"], row["before_cpu_ms"], old_ptx, old_diags = time_compile(
                args.before, path, args.runs, "/tmp/argus_phases_before.ptx")
            row["ptx_identical"] = old_ptx == ptx
            row["diagnostics_identical"] = old_diags == diags
        rows.append(row)
        print(row, flush=True)
    bench = os.path.join(ROOT, "build", "bench", "compile_bench")
    out = "" if args.phase_runs == 0 else subprocess.run(
        [bench, "--phases", f"--repetitions={args.phase_runs}"], check=True, capture_output=True, text=True).stdout
    phases = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    load_end = os.getloadavg()[0]
    with open(os.path.join(RESULTS, "compile_phases.json"), "w") as f:
        json.dump({"whole": rows, "phases": phases}, f, indent=1)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = [
        "# Whole compile per example, and where the time goes", "",
        f"- date: {stamp}; machine: {platform.machine()}, {os.cpu_count()} cores, shared; load average "
        f"{load_start:.1f} at the start, {load_end:.1f} at the end",
        f"- command: `python3 bench/compile_phases.py --runs {args.runs} --phase-runs {args.phase_runs}"
        + (" --before OLD_ARGUSC" if args.before else "") + "` (raw: compile_phases.json)",
        f"- whole: `build/argusc FILE -o OUT`, the whole process, median of {args.runs}; CPU = user + sys", "",
    ]
    if args.before:
        lines += ["| example | before wall | before CPU | after wall | after CPU | PTX byte-identical | same diagnostics |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            lines.append(f"| {r['example']} | {r['before_wall_ms']:.0f} ms | {r['before_cpu_ms']:.0f} ms | "
                         f"{r['after_wall_ms']:.0f} ms | {r['after_cpu_ms']:.0f} ms | "
                         f"{'yes' if r['ptx_identical'] else 'NO'} | {'yes' if r['diagnostics_identical'] else 'NO'} |")
    else:
        lines += ["| example | wall | CPU |", "| --- | --- | --- |"]
        for r in rows:
            lines.append(f"| {r['example']} | {r['after_wall_ms']:.0f} ms | {r['after_cpu_ms']:.0f} ms |")
    lines += ["", f"Phases (`build/bench/compile_bench --phases --repetitions={args.phase_runs}`, in process, median; "
              "whole, one thread: the same binary with CompileOptions::parallel off, back to back; "
              "checker analyses as `name ms (queries q, undecided u, units)`, their ms the wall time of each "
              "in its lane):", "",
              "| example | whole | whole, one thread | parse | sema | checker | lower+O3 | backend | analyses with queries |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in phases:
        analyses = "; ".join(f"{a['name']} {a['ms']:.0f} ms (q {a['queries']}, u {a['unknown']}, "
                             f"{a['units'] / 1e6:.2f} M)" for a in p["analyses"] if a["queries"] or a["ms"] >= 5)
        lines.append(f"| {p['example']} | {p['whole_ms']:.0f} | {p.get('whole_sequential_ms', 0):.0f} | "
                     f"{p['parse_ms']:.0f} | {p['sema_ms']:.0f} | "
                     f"{p['checker_ms']:.0f} | {p['lower+O3_ms']:.0f} | {p['backend_ms']:.0f} | {analyses} |")
    with open(os.path.join(RESULTS, "compile.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
