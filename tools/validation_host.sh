#!/usr/bin/env bash
# Regenerates the numbers of the "Host runtime" section of docs/validation.md
# (docs/design.md §1.2, docs/host.md): end-to-end time, device idle fraction, drains,
# waits and peak device memory per host mode for each host model on a2, the
# effect of descriptor batching on many small tasks, and the hetero overlap.
#
# usage: tools/validation_host.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, out/validation_host)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-build}/npusim"
OUT="${2:-out/validation_host}"
CHIP=configs/chips/a2.json
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "no $BIN: build first (cmake -S . -B build && cmake --build build -j2)" >&2; exit 2; }

run() {  # name workload sets...
    local name=$1 workload=$2
    shift 2
    local args=()
    for s in "$@"; do args+=(--set "$s"); done
    "$BIN" run -q --chip "$CHIP" --workload "$workload" "${args[@]}" --stats "$OUT/$name.json"
}

rows() {  # label files...: one row per host mode of one model, vs sync relative to that model's sync run
    python3 - "$@" <<'PY'
import json, sys
label, files = sys.argv[1], sys.argv[2:]
sync = None
for f in files:
    s = json.load(open(f))
    h = s.get("host")
    if h is None:
        print(f"| {label} | off (device only) | {s['total_ns']/1000:.1f} | | | | | | | | |")
        continue
    e2e = h["end_to_end_ns"] / 1000
    if h["mode"] == "sync":
        sync = e2e
    rel = f"{(e2e / sync - 1) * 100:+.1f}%" if sync else ""
    print(f"| {label} | {h['mode']} | {e2e:.1f} | {rel} | {h['device_busy_ns']/1000:.1f} | {h['device_idle_fraction']*100:.1f}% | "
          f"{h['launches']} | {h['submissions']} | {h['drains']} | {h['waits']} | {h['peak_device_memory_bytes']/2**20:.2f} |")
PY
}

for model in host_smallops llm_decode; do
    for mode in off sync async pipeline hetero; do
        run "${model}_$mode" "models/$model.json" "workload.host_mode=$mode"
    done
done
for mode in off sync async pipeline; do
    run "resnet50_b32_$mode" models/resnet50.json workload.batch=32 "workload.host_mode=$mode"
done
# Hetero: a CPU branch beside an NPU branch.
for mode in off sync pipeline hetero; do run "host_hetero_$mode" models/host_hetero.json "workload.host_mode=$mode"; done

# One table: every model in every host mode against its device-only run.
printf '\nEvery host mode against the device-only run (`off`), on a2:\n\n'
echo "| model | mode | end-to-end µs | vs sync | device busy µs | device idle | launches | submissions | drains | waits | peak device memory MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
rows host_smallops "$OUT"/host_smallops_{off,sync,async,pipeline,hetero}.json
rows llm_decode "$OUT"/llm_decode_{off,sync,async,pipeline,hetero}.json
rows "resnet50, batch 32 (static shapes)" "$OUT"/resnet50_b32_{off,sync,async,pipeline}.json
rows host_hetero "$OUT"/host_hetero_{off,sync,pipeline,hetero}.json

# Where the host's time goes, per mode (host.breakdown.*: thread time, waits included).
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
groups = ["frontend", "infer", "resize", "launch", "queue", "drain", "wait", "cpu"]
print("\nHost time by stage group: models/host_smallops.json on a2, thread time in µs\n")
print("| mode | " + " | ".join(groups) + " |")
print("|---|" + "---|" * len(groups))
for mode in ("sync", "async", "pipeline", "hetero"):
    h = json.load(open(f"{out}/host_smallops_{mode}.json"))["host"]
    print(f"| {mode} | " + " | ".join(f"{h['breakdown'][g + '_ns']/1000:.1f}" for g in groups) + " |")
PY

# Descriptor batching on many small tasks: host_smallops at batch 16, pipeline.
for b in 1 4 16 0; do
    run "submit_batch_$b" models/host_smallops.json workload.batch=16 workload.host_mode=pipeline "workload.submit_batch=$b"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
print("\nDescriptor batching: models/host_smallops.json at batch 16, pipeline mode, on a2\n")
print("| submit_batch | tasks | launches | submissions | submit busy µs | end-to-end µs |")
print("|---|---|---|---|---|---|")
for b in (1, 4, 16, 0):
    s = json.load(open(f"{out}/submit_batch_{b}.json")); h = s["host"]
    print(f"| {b if b else '0 (whole launch)'} | {s['tasks']['count']} | {h['launches']} | {h['submissions']} | "
          f"{h['stages']['submit']['busy_ns']/1000:.1f} | {h['end_to_end_ns']/1000:.1f} |")
PY

# The hetero overlap.
python3 - "$OUT" <<'PY'
import json, sys
h = json.load(open(f"{sys.argv[1]}/host_hetero_hetero.json"))["host"]
print(f"\nhetero: CPU ops {h['cpu_ops']}, CPU busy {h['cpu']['busy_ns']/1000:.1f} µs, device busy "
      f"{h['device_busy_ns']/1000:.1f} µs, overlapped {h['cpu']['device_overlap_ns']/1000:.1f} µs, "
      f"end-to-end {h['end_to_end_ns']/1000:.1f} µs")
PY

# The drain in the middle of a pipelined run: its trace must be well-formed (the
# drain and wait slices themselves are checked by tests/host/test_host.cpp).
"$BIN" run -q --chip "$CHIP" --workload models/host_smallops.json --set workload.host_mode=pipeline \
    --stats "$OUT/drain.json" --trace "$OUT/drain_trace.json" --trace-tasks-only
python3 tools/check_trace.py "$OUT/drain_trace.json" --quiet
