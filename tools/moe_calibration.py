#!/usr/bin/python3
"""How much of the MoE Dispatch's calibration rests on fitted constants.

Runs the Dispatch at the calibration point (the chip file's ranks, 288, and
batch 128; targets baseline 219 us and optimized 117 us), then once more per
fitted constant with that constant set to 0, and prints each constant's share
of the result it was fitted to: (T - T_without) / T. A share above 50% means
one number carries the result and a mechanism is missing (docs/supernode.md
"Calibration"). With --table it also prints how the model's predictions move
with batch size and rank count (about 256 experts: experts_per_rank =
ceil(256 / ranks)), for comparison with published figures.

usage: moe_calibration.py [--npusim build/npusim] [--chip configs/chips/a3-supernode.json]
                          [--set PATH=VALUE]... [--table] [--check] [-j N]

--check exits 1 if a calibration point is off by more than 10% or a share
exceeds 50%. Standard library only."""
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile

import tool_args

# Constants with no public figure, fitted to the two calibration points
# (configs/chips/a3-supernode.json notes). Everything else is public or an
# estimate fixed before fitting.
FITTED = [
    "chip.kernel.descriptor_issue_ns",
    "chip.kernel.completion_ns",
    "chip.kernel.flag_handshake_ns",
    "chip.kernel.scalar_loop_cycles",
]
TARGETS_US = {"baseline": 219.0, "optimized": 117.0}
VARIANTS = ["baseline", "optimized"]


def run(npusim, chip, sets, tmp, name):
    stats = os.path.join(tmp, name + ".json")
    cmd = [npusim, "run", "--chip", chip, "--workload", "models/moe_dispatch.json", "--stats", stats, "-q"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"moe_calibration: error: {' '.join(cmd)}: {r.stderr.strip()}")
    return json.load(open(stats))["total_ns"] / 1000.0


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\n\n")[0], usage=__doc__.split("usage: ")[1].split("\n\n")[0])
    ap.add_argument("--npusim", default="build/npusim")
    ap.add_argument("--chip", default="configs/chips/a3-supernode.json")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.access(a.npusim, os.X_OK):
        sys.exit(f"moe_calibration: error: {a.npusim} is not built")

    jobs = {}
    for v in VARIANTS:
        jobs[(v, None)] = a.sets + [f"workload.variant={v}"]
        for key in FITTED:
            jobs[(v, key)] = a.sets + [f"workload.variant={v}", f"{key}=0"]
    if a.table:
        for b in (32, 64, 128, 256):
            for v in VARIANTS:
                jobs[(v, f"batch={b}")] = a.sets + [f"workload.variant={v}", f"workload.dims.tokens={b}"]
        for r in (16, 64, 288):
            for v in VARIANTS:
                jobs[(v, f"ranks={r}")] = a.sets + [f"workload.variant={v}", f"chip.interconnect.ranks={r}",
                                                  f"workload.dims.experts_per_rank={math.ceil(256 / r)}"]
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as pool:
        futures = {k: pool.submit(run, a.npusim, a.chip, s, tmp, f"run{i}") for i, (k, s) in enumerate(jobs.items())}
        t = {k: f.result() for k, f in futures.items()}

    bad = []
    print(f"calibration point: {a.chip}, batch 128 (targets: baseline 219 us, optimized 117 us, +-10%)")
    print(f"{'variant':<10} {'target us':>10} {'model us':>10} {'error':>8}")
    for v in VARIANTS:
        err = t[(v, None)] / TARGETS_US[v] - 1
        print(f"{v:<10} {TARGETS_US[v]:>10.1f} {t[(v, None)]:>10.1f} {100 * err:>+7.1f}%")
        if abs(err) > 0.10:
            bad.append(f"{v} is {100 * err:+.1f}% off its target")
    print()
    print("share of each fitted constant in the result it was fitted to: (T - T with it at 0) / T")
    print(f"{'fitted constant':<34} {'baseline':>9} {'optimized':>10}")
    for key in FITTED:
        shares = [(t[(v, None)] - t[(v, key)]) / t[(v, None)] for v in VARIANTS]
        print(f"{key:<34} {100 * shares[0]:>8.1f}% {100 * shares[1]:>9.1f}%")
        for v, s in zip(VARIANTS, shares):
            if s > 0.5:
                bad.append(f"{key} carries {100 * s:.0f}% of {v}")
    if a.table:
        print()
        print("predictions (us; ranks rows use experts_per_rank = ceil(256 / ranks))")
        print(f"{'point':<12} {'baseline':>9} {'optimized':>10} {'speed-up':>9}")
        for p in ["batch=32", "batch=64", "batch=128", "batch=256", "ranks=16", "ranks=64", "ranks=288"]:
            b, o = t[("baseline", p)], t[("optimized", p)]
            print(f"{p:<12} {b:>9.1f} {o:>10.1f} {b / o:>8.2f}x")
    for m in bad:
        print(f"moe_calibration: {m}", file=sys.stderr)
    return 1 if a.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
