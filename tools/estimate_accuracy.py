#!/usr/bin/python3
"""The compiler's cost model against the run, task by task: compiles a model
(npusim compile --estimates), runs the stream with a task-only trace, and
sets each task's estimate beside its simulated time (start to end on its
core). Prints per op and overall the median run/estimate and its spread.

    tools/estimate_accuracy.py CHIP MODEL [--set PATH=VALUE]... [--bin build/npusim] [--json OUT]

A ratio above 1: the run took longer than the compiler thought. The tiler
decides between tilings by these estimates, so choices closer than their
error are coin tosses (docs/validation.md, "The cost model against the run").
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

import tool_args

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def measure(binary, chip, model, sets):
    with tempfile.TemporaryDirectory() as tmp:
        stream, est, trace, stats = (os.path.join(tmp, n) for n in ("s.jsonl", "e.csv", "t.json", "stats.json"))
        extra = [a for s in sets for a in ("--set", s)]
        chip_only = [a for s in sets if s.startswith("chip.") for a in ("--set", s)]  # the stream is compiled
        subprocess.run([binary, "compile", "--chip", chip, "--workload", model, "-q", "--emit-tasks", stream,
                        "--estimates", est] + extra, check=True)
        subprocess.run([binary, "run", "--chip", chip, "--workload", stream, "-q", "--trace", trace,
                        "--trace-tasks-only", "--stats", stats] + chip_only, check=True, stdout=subprocess.DEVNULL)
        with open(est) as f:
            rows = {r["id"]: r for r in csv.DictReader(f)}
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        with open(stats) as f:
            ghz = json.load(f)["clock_ghz"]
    # The run's task slices (not the scalar core's dispatch slices), ns -> cycles.
    out = {}
    for e in events:
        args = e.get("args", {})
        if e.get("ph") == "X" and "id" in args and args["id"] in rows and not e["name"].startswith("dispatch"):
            r = rows[args["id"]]
            est_cycles = float(r["est_cycles"])
            if est_cycles > 0:
                out[args["id"]] = (r["op"], r["core_type"], e["dur"] * 1000.0 * ghz, est_cycles)
    return out


def main():
    ap = tool_args.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chip")
    ap.add_argument("model")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npusim"))
    ap.add_argument("--json", help="write the per-task figures here")
    a = ap.parse_args()
    tasks = measure(a.bin, a.chip, a.model, a.set)
    if not tasks:
        sys.exit("estimate_accuracy: no task of the run has an estimate")
    by_op = {}
    for op, core, run, est in tasks.values():
        by_op.setdefault(op, []).append(run / est)
    print(f"{'op':44} {'tasks':>5} {'median run/est':>15}")
    for op, rs in by_op.items():
        print(f"{op:44} {len(rs):>5} {statistics.median(rs):>15.3f}")
    ratios = [run / est for _, _, run, est in tasks.values()]
    within = sum(abs(r - 1) <= 0.10 for r in ratios) / len(ratios)
    print(f"all {len(ratios)} tasks: median {statistics.median(ratios):.3f}, p10 {quantile(ratios, 0.1):.3f}, "
          f"p90 {quantile(ratios, 0.9):.3f}, within 10%: {within:.0%}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({k: {"op": v[0], "core": v[1], "run_cycles": v[2], "est_cycles": v[3]} for k, v in tasks.items()},
                      f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
