#!/usr/bin/env bash
# Regenerates the figures of docs/validation.md "Supernode: MoE Dispatch" and
# docs/img/moe_phases_*.png:
#   1. the calibration points (288 ranks, batch 128) by phase, both variants;
#   2. a batch sweep 8 -> 128 at 288 ranks, both variants;
#   3. a rank sweep 8 -> 288 at batch 128, both variants (about 256 experts:
#      experts_per_rank = ceil(256 / ranks));
#   4. stale reads per reorder seed for the three protocols;
#   5. the per-core phase charts of the slowest rank (needs matplotlib).
#
#   tools/validation_moe.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, out/validation_moe)
#
# Prints the Markdown tables on stdout; the runs' stats stay in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-out/validation_moe}
NPUSIM="$BUILD/npusim"
CHIP=configs/chips/a3-supernode.json
MODEL=models/moe_dispatch.json
mkdir -p "$OUT" docs/img
[ -x "$NPUSIM" ] || { echo "validation_moe: $NPUSIM not built" >&2; exit 2; }

run() {  # run NAME ARGS... -> OUT/NAME.json
    local name=$1
    shift
    "$NPUSIM" run --chip "$CHIP" --workload "$MODEL" "$@" --stats "$OUT/$name.json" -q
}

# 1. Calibration, with the per-core profiles for the charts.
for v in baseline optimized; do
    run "cal_$v" --set workload.variant=$v --profile "$OUT/cal_$v.csv"
done
# 2. Batch sweep.
for b in 8 16 32 64 128; do
    for v in baseline optimized; do run "batch_${b}_$v" --set workload.variant=$v --set workload.dims.tokens=$b; done
done
# 3. Rank sweep.
for r in 8 16 32 64 128 288; do
    epr=$(( (256 + r - 1) / r ))
    for v in baseline optimized; do
        run "ranks_${r}_$v" --set workload.variant=$v --set chip.interconnect.ranks=$r --set workload.dims.experts_per_rank=$epr
    done
done
# 4. Stale reads (32 ranks keeps it quick).
for s in 0 1 2 3 4; do
    run "stale_sep_$s" --set chip.interconnect.ranks=32 --set workload.flag_in_block=false --set chip.interconnect.reorder_seed=$s
    run "stale_daf_$s" --set chip.interconnect.ranks=32 --set chip.interconnect.reorder_seed=$s
    run "stale_base_$s" --set chip.interconnect.ranks=32 --set workload.variant=baseline --set chip.interconnect.reorder_seed=$s
done
# 5. Phase charts (the Debian python has matplotlib when a pyenv one does not).
PY=python3
python3 -c "import matplotlib" 2>/dev/null || PY=/usr/bin/python3
for v in baseline optimized; do
    $PY tools/plot_phases.py "$OUT/cal_$v.csv" --out "docs/img/moe_phases_$v.png" \
        --title "MoE dispatch, $v: 288 ranks, batch 128 - per-core phases of the slowest rank" >&2 || true
done

python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
def load(name):
    with open(f"{out}/{name}.json") as f:
        return json.load(f)
def us(ns):
    return f"{ns / 1000:.1f}"

print("### Calibration points (288 ranks, batch 128)\n")
print("| variant | model total_ns | published | error |")
print("|---|---|---|---|")
for v, ref in (("baseline", 219.0), ("optimized", 117.0)):
    t = load(f"cal_{v}")["total_ns"] / 1000
    print(f"| {v} | {t:.1f} us | {ref:.0f} us | {100 * (t - ref) / ref:+.1f}% |")
for v in ("baseline", "optimized"):
    d = load(f"cal_{v}")
    ph = sorted(d["phases"].items(), key=lambda kv: kv[1]["order"])
    print(f"\n#### {v}: phases per AIV core (all 13,824 cores)\n")
    print("| phase | mean duration | max duration | mean end | latest end |")
    print("|---|---|---|---|---|")
    for name, p in ph:
        print(f"| {name} | {us(p['mean_ns'])} us | {us(p['max_ns'])} us | {us(p['end_mean_ns'])} us | {us(p['end_max_ns'])} us |")
    m = d["mesh"]
    print(f"\nmesh: {m['bytes'] / d['ranks']['count'] / 1e6:.2f} MB sent per rank, utilisation "
          f"{100 * d['units']['mesh']['utilization']:.1f}%, busiest link busy {100 * m['busiest_link_fraction']:.1f}% "
          f"of the run; SyncAlls {d['kernel']['sync_alls']}; stale reads {d['memory_model']['stale_reads']}.")

def sweep(title, key, values, label):
    print(f"\n### {title}\n")
    print(f"| {label} | baseline | optimized | speed-up | optimized: send end (mean) | optimized: busiest link |")
    print("|---|---|---|---|---|---|")
    for x in values:
        b, o = load(f"{key}_{x}_baseline"), load(f"{key}_{x}_optimized")
        tb, to = b["total_ns"] / 1000, o["total_ns"] / 1000
        print(f"| {x} | {tb:.1f} us | {to:.1f} us | {tb / to:.2f}x | {us(o['phases']['send']['end_mean_ns'])} us "
              f"| {100 * o['mesh']['busiest_link_fraction']:.0f}% |")

sweep("Batch sweep (288 ranks, one expert per rank)", "batch", (8, 16, 32, 64, 128), "batch")
sweep("Rank sweep (batch 128, experts_per_rank = ceil(256 / ranks))", "ranks", (8, 16, 32, 64, 128, 288), "ranks")

print("\n### Stale reads per reorder seed (32 ranks)\n")
print("| protocol | seed 0 | seed 1 | seed 2 | seed 3 | seed 4 |")
print("|---|---|---|---|---|---|")
for key, name in (("sep", "optimized, flag in a separate block, no barrier"), ("daf", "optimized, Data-as-Flag"),
                  ("base", "baseline (fence + SyncAll before the status)")):
    cells = " | ".join(str(load(f"stale_{key}_{s}")["memory_model"]["stale_reads"]) for s in range(5))
    print(f"| {name} | {cells} |")
EOF
