#!/usr/bin/python3
"""What-if answers between the conformance grid's points: sweeps each chip
parameter over several values (not only /2 and x2) for each bundled model,
recompiled at every point, and lists each step where a resource that grows
makes the run slower by more than the tolerance (1%). Those are wrong signs
the grid does not sample; docs/validation.md ("Between the grid points")
lists them with their causes.

    tools/between_grid.py [--bin build/npusim] [--chips a2,ax300] [-j 2] [--out DIR] [--markdown]

Exit 1 when any step is flagged (0 otherwise); 2 on bad arguments.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS = {
    "bert128": ("models/bert_layer.json", []),
    "bert512": ("models/bert_layer.json", ["workload.dims.seq_len=512"]),
    "segnet": ("models/segnet.json", []),
    "convbnrelu": ("models/convbnrelu.json", []),
    "llm_decode": ("models/llm_decode.json", ["workload.host_mode=off"]),
}

# Each list grows the resource left to right (a2's defaults among them).
PARAMS = {
    "chip.cores.cube.count": [12, 16, 20, 24, 28, 32, 36, 40, 48],
    "chip.cores.vector.count": [24, 32, 48, 64, 96],
    "chip.buffers.ub_kb": [96, 128, 192, 256, 384],
    "chip.buffers.l1_kb": [256, 384, 512, 768, 1024],
    "chip.buffers.l0a_kb": [32, 48, 64, 96, 128],
    "chip.buffers.l0b_kb": [32, 48, 64, 96, 128],
    "chip.buffers.l0c_kb": [64, 96, 128, 192, 256],
    "chip.hbm.bandwidth_gbps": [800, 1200, 1600, 2400, 3200],
    "chip.l2.bandwidth_gbps": [2500, 3750, 5000, 7500, 10000],
    "chip.l2.size_mb": [24, 48, 96, 192, 384],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npusim"))
    ap.add_argument("--chips", default="a2,ax300")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--out", help="keep each run's statistics here (default: a temporary folder)")
    ap.add_argument("--markdown", action="store_true", help="print the flagged steps as a Markdown table")
    args = ap.parse_args()
    models = args.models.split(",")
    for m in models:
        if m not in MODELS:
            ap.error(f"--models: unknown model '{m}' (known: {', '.join(MODELS)})")
    if not os.access(args.bin, os.X_OK):
        ap.error(f"--bin: {args.bin} is not an executable npusim (build it first)")
    chips = args.chips.split(",")
    for c in chips:
        if not os.path.exists(os.path.join(ROOT, "configs", "chips", c + ".json")):
            ap.error(f"--chips: no configs/chips/{c}.json")
    out = args.out or tempfile.mkdtemp(prefix="between_grid_")
    os.makedirs(out, exist_ok=True)

    def run(job):
        chip, model, key, value = job
        path, sets = MODELS[model]
        stats = os.path.join(out, f"{chip}_{model}_{key}_{value}.json")
        cmd = [args.bin, "run", "--chip", os.path.join(ROOT, "configs", "chips", chip + ".json"),
               "--workload", os.path.join(ROOT, path), "--stats", stats, "-q", "--set", f"{key}={value}"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return job, None, r.stderr.strip().splitlines()[-1:] or ["exit %d" % r.returncode]
        with open(stats) as f:
            return job, json.load(f)["total_cycles"], None

    jobs = [(c, m, k, v) for c in chips for m in models for k in PARAMS for v in PARAMS[k]]
    cycles, errors = {}, []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as ex:
        for job, cyc, err in ex.map(run, jobs):
            cycles[job] = cyc
            if err:
                errors.append(f"{' '.join(map(str, job))}: {err[0]}")
    flagged = []
    for c in chips:
        for m in models:
            for k, values in PARAMS.items():
                runs = [cycles[(c, m, k, v)] for v in values]
                for i in range(1, len(values)):
                    a, b = runs[i - 1], runs[i]
                    if a and b and b > a * (1 + args.tolerance):
                        flagged.append((c, m, k, values[i - 1], values[i], a, b))
    if args.markdown:
        print("| chip | model | parameter | step | cycles | change |")
        print("|---|---|---|---|---|---|")
        for c, m, k, v0, v1, a, b in flagged:
            print(f"| {c} | {m} | `{k}` | {v0} → {v1} | {a} → {b} | +{(b / a - 1) * 100:.1f}% |")
    else:
        for c, m, k, v0, v1, a, b in flagged:
            print(f"{c} {m} {k} {v0} -> {v1}: {a} -> {b} cycles (+{(b / a - 1) * 100:.1f}%)")
    sweeps = len(chips) * len(models) * len(PARAMS)
    print(f"{len(flagged)} steps slower by more than {args.tolerance * 100:g}% in {sweeps} sweeps "
          f"({len(jobs)} runs); statistics in {out}", file=sys.stderr)
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if flagged or errors else 0


if __name__ == "__main__":
    sys.exit(main())
