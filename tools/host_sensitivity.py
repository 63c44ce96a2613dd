#!/usr/bin/python3
"""The host sensitivity table of docs/host.md: end-to-end time of
models/host_smallops.json on a2 in sync, async and pipeline mode against the
per-op host cost (every chip.host stage cost scaled by one factor) and the
kernel size (workload.batch: the ops work on [batch, 128, 64]). It shows where
async and pipeline stop paying: once the kernels outlast the host's work per
op, every mode converges on the device time.

Usage: tools/host_sensitivity.py [--npusim build/npusim] [--write]
  --write   replace the table between the host-sensitivity markers in docs/host.md
            (otherwise print it)
Python 3 standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile

import tool_args

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHIP = os.path.join(ROOT, "configs/chips/a2.json")
MODEL = os.path.join(ROOT, "models/host_smallops.json")
STAGES = ["frontend", "prepare", "infer", "resize", "alloc", "launch", "free"]
SCALES = [0.25, 1, 4]
BATCHES = [1, 256, 1024, 2048, 4096, 8192]
MODES = ["sync", "async", "pipeline"]
BEGIN, END = "<!-- host-sensitivity:begin -->", "<!-- host-sensitivity:end -->"


def defaults(npusim):
    """The chip's stage costs, from the resolved config of one run."""
    stats = run(npusim, ["workload.host_mode=sync"])
    host = stats["config"]["chip"]["host"]
    return {k: host[k] for k in host if any(k.startswith(s + "_") for s in STAGES) and k.endswith("_us")}


def run(npusim, sets):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "stats.json")
        cmd = [npusim, "run", "-q", "--chip", CHIP, "--workload", MODEL, "--stats", out]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        with open(out) as f:
            return json.load(f)


def table(npusim):
    base = defaults(npusim)
    lines = ["| host cost × | batch | device only µs | sync µs | async µs | pipeline µs | async / sync | pipeline / sync |",
             "|---|---|---|---|---|---|---|---|"]
    for k in SCALES:
        scaled = ["chip.host.%s=%g" % (key, v * k) for key, v in sorted(base.items())]
        for b in BATCHES:
            batch = "workload.batch=%d" % b
            device = run(npusim, [batch, "workload.host_mode=off"])["total_ns"] / 1e3
            e2e = {m: run(npusim, scaled + [batch, "workload.host_mode=" + m])["host"]["end_to_end_ns"] / 1e3 for m in MODES}
            lines.append("| %g | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |" % (
                k, b, device, e2e["sync"], e2e["async"], e2e["pipeline"], e2e["async"] / e2e["sync"],
                e2e["pipeline"] / e2e["sync"]))
    return "\n".join(lines)


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npusim", default=os.path.join(ROOT, "build/npusim"))
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    t = table(a.npusim)
    if not a.write:
        print(t)
        return 0
    doc = os.path.join(ROOT, "docs/host.md")
    text = open(doc).read()
    if BEGIN not in text or END not in text:
        sys.exit("docs/host.md: markers %s ... %s not found" % (BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(doc, "w").write(head + BEGIN + "\n" + t + "\n" + END + tail)
    print("wrote the sensitivity table into docs/host.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
