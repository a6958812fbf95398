#!/usr/bin/env python3
"""How well the agent's cost model ranks candidates: Spearman's rank correlation
between the model's time (`model_time_ms`, before calibration) and the measured
GPU time (`time_ms`) of every valid GPU-timed candidate in the given agent
reports (report.json files written by `argus-agent run` on a GPU).

    python3 bench/agent_rank_correlation.py bench/results/agent/h100_s19/run*/report.json ...

Prints a Markdown table: one row per report, one per task (its reports pooled)
and one for all candidates. The model ranks within a task (the planner compares
candidates of one task), so the per-task rows are the ones that matter; the
pooled row mixes tasks whose times differ by orders of magnitude. The last
column keeps only the candidates measured within 2x of the report's fastest:
where the search actually decides, away from the naive kernel's 100x.
"""
import json
import math
import sys
from collections import defaultdict


def ranks(values):
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def spearman(pairs):
    if len(pairs) < 3:
        return None
    xs = ranks([p[0] for p in pairs])
    ys = ranks([p[1] for p in pairs])
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    vx = sum((x - mx) ** 2 for x in xs)
    vy = sum((y - my) ** 2 for y in ys)
    if vx == 0 or vy == 0:
        return None
    return cov / math.sqrt(vx * vy)


def pairs_of(report):
    out = []
    for c in report.get("candidates", []):
        if c.get("verdict") != "ok" or c.get("time_source") != "gpu":
            continue
        model, measured = c.get("model_time_ms"), c.get("time_ms")
        if isinstance(model, (int, float)) and isinstance(measured, (int, float)) and model > 0 and measured > 0:
            out.append((model, measured))
    return out


def near_best(pairs, factor=2.0):
    if not pairs:
        return []
    fastest = min(p[1] for p in pairs)
    return [p for p in pairs if p[1] <= factor * fastest]


def row(label, task, pairs):
    close = near_best(pairs)
    return f"| {label} | {task} | {len(pairs)} | {fmt(spearman(pairs))} | {len(close)}: {fmt(spearman(close))} |"


def fmt(rho):
    return "n/a" if rho is None else f"{rho:+.2f}"


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    by_task = defaultdict(list)
    everything = []
    print("| report | task | valid GPU-timed candidates | Spearman (model vs measured) | within 2x of the fastest: count, Spearman |")
    print("|---|---|---|---|---|")
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        task = report.get("task", {}).get("name", "?")
        pairs = pairs_of(report)
        by_task[task] += pairs
        everything += pairs
        print(row(path, task, pairs))
    for task, pairs in sorted(by_task.items()):
        print(row("all reports of the task", task, pairs))
    print(row("all", "(pooled across tasks)", everything))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
