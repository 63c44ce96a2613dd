#!/usr/bin/env bash
# Regenerates every number of the section "Compiler and single-die workloads"
# of docs/validation.md from the npusim binary, as Markdown on stdout.
#
#   tools/validation_compiler.sh [BUILD_DIR]      (default: build)
#
# Needs python3 (standard library only) and /usr/bin/time for the speed
# figure (falls back to python's clock). Takes a few seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
BIN="$BUILD/npusim"
[ -x "$BIN" ] || { echo "validation_compiler.sh: no npusim binary at $BIN (build first)" >&2; exit 2; }
cd "$ROOT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/npusim_validation_compiler.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
AX=configs/chips/ax300.json
A2=configs/chips/a2.json
FORCED='workload.tiling={"conv1":{"m_blocks":2,"n_blocks":8}}'

# run NAME CHIP WORKLOAD [--set ...]...: stats to $WORK/NAME.json, trace to $WORK/NAME.trace.json
run() {
    local name=$1 chip=$2 workload=$3
    shift 3
    local sets=()
    local a
    for a in "$@"; do sets+=(--set "$a"); done
    "$BIN" run --chip "$chip" --workload "$workload" "${sets[@]}" --stats "$WORK/$name.json" \
        --trace "$WORK/$name.trace.json" >"$WORK/$name.out"
}

# ---- runs -------------------------------------------------------------------
"$BIN" compile --chip $AX --workload models/convbnrelu.json --emit-tasks "$WORK/cbr.jsonl" >"$WORK/compile_default.txt"

# The ConvBNReLU rows compare one pass each: the plan searches, which would
# keep other tiles per setting, are off.
NOSEARCH=(workload.passes.explore_cube_cores=false workload.passes.search_cube_plans=false
    workload.passes.explore_vector_cores=false)
for s in op tile; do
    run cbr_$s $AX models/convbnrelu.json workload.sync=$s "${NOSEARCH[@]}"
    run cbr_forced_$s $AX models/convbnrelu.json workload.sync=$s "$FORCED" "${NOSEARCH[@]}"
    run cbr_nofuse_$s $AX models/convbnrelu.json workload.sync=$s workload.passes.fuse_activation=false "${NOSEARCH[@]}"
done
for b in auto fuse split; do
    run cbr_boundary_$b $AX models/convbnrelu.json workload.passes.fuse_activation=false workload.fusion_boundary=$b \
        "${NOSEARCH[@]}"
done

for b in auto fuse split; do
    run r50_a2_boundary_$b $A2 models/resnet50.json workload.fusion_boundary=$b
    "$BIN" compile --chip $A2 --workload models/resnet50.json --set workload.fusion_boundary=$b \
        --emit-tasks "$WORK/r50_boundary.jsonl" >"$WORK/r50_a2_boundary_$b.txt"
done

for l in NCHW NC1HWC0; do
    for h in true false; do
        # The plan searches off: they would pick other tiles per layout, and
        # the rows compare the layout pass alone.
        run seg_${l}_$h $AX models/segnet.json workload.input_layout=$l workload.passes.hoist_layout=$h \
            "${NOSEARCH[@]}"
    done
done

cat >"$WORK/chain.json" <<'EOF'
{"kind": "graph", "name": "chain",
 "notes": "a Vector-only chain on [1,128,768] fp16: bias Add -> GELU -> scale Mul",
 "tensors": {"x": {"shape": [1, 128, 768], "input": true},
             "bias": {"shape": [768], "const": true}, "scale": {"shape": [768], "const": true}},
 "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "bias"], "outputs": ["a"]},
           {"name": "gelu", "op": "GELU", "inputs": ["a"], "outputs": ["g"]},
           {"name": "mul", "op": "Mul", "inputs": ["g", "scale"], "outputs": ["y"]}],
 "outputs": ["y"]}
EOF
for f in true false; do
    run chain_$f $AX "$WORK/chain.json" workload.passes.fuse_vector=$f
    run bert_fv_$f $AX models/bert_layer.json workload.passes.fuse_vector=$f
done
for c in ax300 a2; do
    for m in resnet50 bert_layer; do
        run ${c}_$m configs/chips/$c.json models/$m.json workload.batch=1
        "$BIN" compile --chip configs/chips/$c.json --workload models/$m.json --emit-tasks "$WORK/${c}_$m.jsonl" >/dev/null
    done
done
for m in convbnrelu resnet50 bert_layer segnet; do
    run b2_$m $AX models/$m.json workload.batch=2
    run b1_$m $AX models/$m.json workload.batch=1
done

# Replay: the emitted stream against compiling on the fly.
"$BIN" compile --chip $A2 --workload models/bert_layer.json --emit-tasks "$WORK/bert_a2.jsonl" >/dev/null
"$BIN" compile --chip $A2 --workload models/resnet50.json --emit-tasks "$WORK/r50_a2.jsonl" >/dev/null
run replay_cbr $AX "$WORK/cbr.jsonl"
run replay_bert_a2 $A2 "$WORK/bert_a2.jsonl"
run replay_r50_a2 $A2 "$WORK/r50_a2.jsonl"

# Speed: compile + simulate ResNet-50 batch 1 on a2, best of 3, wall clock.
: >"$WORK/speed.txt"
for i in 1 2 3; do
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%e %M" -o "$WORK/time$i.txt" "$BIN" run --chip $A2 --workload models/resnet50.json \
            --stats "$WORK/speed.json" >/dev/null
    else
        python3 -c 'import subprocess,sys,time; t=time.time(); subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL); print("%.2f 0" % (time.time()-t))' \
            "$BIN" run --chip $A2 --workload models/resnet50.json --stats "$WORK/speed.json" >"$WORK/time$i.txt"
    fi
    tail -n 1 "$WORK/time$i.txt" >>"$WORK/speed.txt"
done

# ---- report -----------------------------------------------------------------
python3 - "$WORK" <<'PY'
import json, os, sys

W = sys.argv[1]


def S(name):
    with open(os.path.join(W, name + ".json")) as f:
        return json.load(f)


def trace_slices(name):
    with open(os.path.join(W, name + ".trace.json")) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    threads = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    out = []
    for e in ev:
        a = e.get("args", {})
        if e.get("ph") == "X" and "op" in a:
            out.append(dict(track=threads.get((e["pid"], e["tid"]), "?"), id=a["id"], op=a["op"], tile=a.get("tile", ""),
                            start=e["ts"], end=e["ts"] + e["dur"], wait=a.get("event_wait_ns", 0.0)))
    return sorted(out, key=lambda s: (s["start"], s["track"]))


def us(s):
    return s["total_ns"] / 1000.0


def pct(x):
    return "%.1f%%" % (100.0 * x)


def util(s, unit):
    return pct(s["units"][unit]["utilization"]) if unit in s["units"] else "-"


def kb(b):
    return "%.1f" % (b / 1024.0)


def mb(b):
    return "%.2f" % (b / 1048576.0)


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()


def fc_time_us(name):
    # FormatConvert time: the summed duration of the FormatConvert task slices.
    return sum(s["end"] - s["start"] for s in trace_slices(name) if s["op"].startswith("trans_"))


def compile_summary(name):
    # The compile report's first line and conv1's tile line, whitespace collapsed
    # (the whole listings are in docs/compiler.md, "ConvBNReLU on ax300: the compile reports").
    with open(os.path.join(W, name)) as f:
        lines = [" ".join(line.split()) for line in f if line.strip()]
    conv = next((l for l in lines if l.startswith("tile: conv1")), "tile: conv1 ?")
    return lines[0], conv


print("<!-- generated by tools/validation_compiler.sh; do not edit the numbers by hand -->")
print()
print("### ConvBNReLU on ax300: op-level vs tile-level sync")
print()
head, conv = compile_summary("compile_default.txt")
print("`npusim compile --chip configs/chips/ax300.json --workload models/convbnrelu.json`: `%s`, `%s`. The whole listing, "
      "and the forced 2 x 8 one, with what they mean: docs/compiler.md, \"ConvBNReLU on ax300: the compile reports\". "
      "The rows below run with the plan searches off (`workload.passes.explore_cube_cores`, `search_cube_plans` and "
      "`explore_vector_cores` false): each compares one setting, on the tiler's own tiles." % (head, conv))
print()
rows = []
for label, base in [("cost model's choice (the compile listing above)", "cbr"), ("forced 2 x 8 (the reference's 16 Cube tasks)", "cbr_forced"),
                    ("ReLU not fused (fuse_activation=false)", "cbr_nofuse")]:
    for sync in ("op", "tile"):
        s = S(base + "_" + sync)
        c = s["compile"]
        rows.append([label, sync, s["tasks"]["by_kernel"].get("matmul", 0), s["tasks"]["by_kernel"].get("vector", 0),
                     c["events"], c["sync_waits"], s["total_cycles"], "%.2f" % us(s), pct(s["overlap"]["cube_vector"]),
                     util(s, "cube"), util(s, "vector"), s["events"]["wait_cycles"]])
table(["tiling", "sync", "Cube tasks", "Vector tasks", "events", "waits", "cycles", "µs", "overlap.cube_vector", "cube util",
       "vector util", "event wait (cycles, summed)"], rows)
for base, label in [("cbr", "default tiling"), ("cbr_forced", "forced 2 x 8"), ("cbr_nofuse", "ReLU not fused")]:
    o, t = S(base + "_op"), S(base + "_tile")
    print("- %s: tile sync is %.1f%% faster (%d -> %d cycles); overlap %s -> %s." % (
        label, 100.0 * (o["total_cycles"] - t["total_cycles"]) / o["total_cycles"], o["total_cycles"], t["total_cycles"],
        pct(o["overlap"]["cube_vector"]), pct(t["overlap"]["cube_vector"])))
d, f = S("cbr_tile"), S("cbr_forced_tile")
print("- The forced 2 x 8 tiling takes %.2fx the cycles of the cost model's choice under tile sync (%d vs %d)."
      % (f["total_cycles"] / d["total_cycles"], f["total_cycles"], d["total_cycles"]))
print()

print("### Fusion boundary: forced vs the cost model's choice")
print()
print("ConvBNReLU on ax300 with ReLU as a Vector kernel behind the conv (fuse_activation=false, tile sync):")
print()
rows = []
for b in ("auto", "fuse", "split"):
    s = S("cbr_boundary_" + b)
    rows.append([b, s["compile"]["tasks"], s["compile"]["sync_waits"], s["total_cycles"], "%.2f" % us(s),
                 pct(s["overlap"]["cube_vector"])])
table(["workload.fusion_boundary", "tasks", "waits", "cycles", "µs", "overlap"], rows)
a, fu, sp = S("cbr_boundary_auto"), S("cbr_boundary_fuse"), S("cbr_boundary_split")
print("- forced split takes %.1f%% more cycles than forced fuse (%d vs %d); auto chose %s."
      % (100.0 * (sp["total_cycles"] / fu["total_cycles"] - 1), sp["total_cycles"], fu["total_cycles"],
         "fuse" if a["total_cycles"] == fu["total_cycles"] else "split" if a["total_cycles"] == sp["total_cycles"] else "?"))
print()

print("ResNet-50 on a2, batch 1 (17 Cube -> residual Add+ReLU boundaries):")
print()
rows = []
for b in ("auto", "fuse", "split"):
    s = S("r50_a2_boundary_" + b)
    with open(os.path.join(W, "r50_a2_boundary_%s.txt" % b)) as f:
        notes = [l for l in f if "fusion boundary" in l]
    nf = sum(1 for l in notes if l.rstrip().endswith(": fuse") or l.rstrip().endswith("fuse (forced)"))
    rows.append([b, "%d / %d" % (nf, len(notes) - nf), s["compile"]["tasks"], s["total_cycles"], "%.2f" % us(s),
                 pct(s["overlap"]["cube_vector"])])
table(["workload.fusion_boundary", "fused / split", "tasks", "cycles", "µs", "overlap"], rows)
a, fu, sp = S("r50_a2_boundary_auto"), S("r50_a2_boundary_fuse"), S("r50_a2_boundary_split")
print("- fusing all 17 takes %.1f%% fewer cycles than the cost model's choice (%d vs %d); splitting all 17 takes %.1f%% more."
      % (100.0 * (1 - fu["total_cycles"] / a["total_cycles"]), fu["total_cycles"], a["total_cycles"],
         100.0 * (sp["total_cycles"] / a["total_cycles"] - 1)))
print()

print("### Layout: hoisting and an NC1HWC0 input (segnet, ax300)")
print()
print("With the plan searches off (`workload.passes.explore_cube_cores`, `search_cube_plans` and `explore_vector_cores` false): they would "
      "pick other plans for each row, and the rows compare the layout pass.")
print()
rows = []
for l in ("NCHW", "NC1HWC0"):
    for h in ("true", "false"):
        s = S("seg_%s_%s" % (l, h))
        c = s["compile"]
        rows.append([l, h, c["format_converts"], mb(c["format_convert_bytes"]), "%.1f" % fc_time_us("seg_%s_%s" % (l, h)),
                     s["total_cycles"], "%.2f" % us(s)])
table(["input_layout", "hoist_layout", "FormatConvert tasks", "FormatConvert MB", "FormatConvert busy µs (summed over cores)",
       "cycles", "µs"], rows)
on, off, nc = S("seg_NCHW_true"), S("seg_NCHW_false"), S("seg_NC1HWC0_true")
print("- hoisting and merging (NCHW input): FormatConvert bytes %.0f%% lower, FormatConvert time %.0f%% lower, "
      "%.1f%% fewer cycles." % (
          100.0 * (1 - on["compile"]["format_convert_bytes"] / off["compile"]["format_convert_bytes"]),
          100.0 * (1 - fc_time_us("seg_NCHW_true") / fc_time_us("seg_NCHW_false")),
          100.0 * (1 - on["total_cycles"] / off["total_cycles"])))
print("- NC1HWC0 input (hoisting on): %d fewer FormatConvert tasks and %d fewer bytes (the [1,3,256,256] fp16 input is "
      "%d B), %.1f%% fewer cycles." % (
          on["compile"]["format_converts"] - nc["compile"]["format_converts"],
          on["compile"]["format_convert_bytes"] - nc["compile"]["format_convert_bytes"], 3 * 256 * 256 * 2,
          100.0 * (1 - nc["total_cycles"] / on["total_cycles"])))
print()

print("### Fusion of Vector chains (ax300, tile sync)")
print()
rows = []
for label, base in [("bias Add -> GELU -> Mul on [1,128,768]", "chain"), ("bert_layer", "bert_fv")]:
    for f in ("true", "false"):
        s = S("%s_%s" % (base, f))
        c = s["compile"]
        rows.append([label, f, c["kernels"], c["tasks"], mb(c["gm_region_bytes"]),
                     mb(s["memory"]["hbm"]["read_bytes"] + s["memory"]["hbm"]["write_bytes"]), s["total_cycles"], "%.2f" % us(s)])
table(["graph", "fuse_vector", "kernels", "tasks", "GM MB named by tasks", "HBM MB moved", "cycles", "µs"], rows)
for label, base in [("chain", "chain"), ("bert_layer", "bert_fv")]:
    on, off = S(base + "_true"), S(base + "_false")
    print("- %s: fused moves %.2fx the GM bytes and takes %.2fx the cycles of unfused." % (
        label, on["compile"]["gm_region_bytes"] / off["compile"]["gm_region_bytes"], on["total_cycles"] / off["total_cycles"]))
print()

def macs(stream):
    # Multiply-accumulates the Cube tasks of a stream ask for (m·n·k).
    total = 0
    with open(os.path.join(W, stream)) as f:
        for line in f:
            t = json.loads(line)
            if t.get("kernel") == "matmul":
                p = t["params"]
                total += p["m"] * p["n"] * p["k"]
    return total


print("### ResNet-50 and a BERT-base layer, batch 1")
print()
rows = []
for m, label in (("resnet50", "ResNet-50"), ("bert_layer", "BERT layer (seq 128)")):
    for c in ("ax300", "a2"):
        s = S("%s_%s" % (c, m))
        cfg = s["config"]["chip"]
        cube = cfg["cores"]["cube"]
        per_cycle = cube["count"] * cube["shape_m"] * cube["shape_k"] * cube["shape_n"]
        g = macs("%s_%s.jsonl" % (c, m))
        ideal = g / per_cycle
        rows.append([label, c, s["compile"]["tasks"], s["total_cycles"], "%.1f" % us(s), util(s, "cube"), util(s, "vector"),
                     util(s, "cube_mte2"), util(s, "cube_m"), util(s, "vector_v"), util(s, "hbm"),
                     pct(s["overlap"]["cube_vector"]), "%.2f" % (g / 1e9), "%.0f" % ideal,
                     "%.1f" % (ideal / cfg["clock_ghz"] / 1000.0), "%.1f%%" % (100.0 * ideal / s["total_cycles"])])
table(["model", "chip", "tasks", "cycles", "µs", "cube", "vector", "cube_mte2", "cube_m", "vector_v", "hbm", "overlap",
       "G MAC", "ideal cycles", "ideal µs", "ideal / simulated"], rows)
print("Ideal: the stream's Cube work (G MAC) at the Cube peak, all Cube cores in M (fp16, %s MAC per core-cycle)." % "16·16·16")
print()

print("### Batch 2 (ax300, defaults)")
print()
rows = []
for m in ("convbnrelu", "resnet50", "bert_layer", "segnet"):
    a, b = S("b1_" + m), S("b2_" + m)
    rows.append([m, a["compile"]["tasks"], b["compile"]["tasks"], a["total_cycles"], b["total_cycles"],
                 "%.2f" % (b["total_cycles"] / a["total_cycles"])])
table(["model", "tasks b=1", "tasks b=2", "cycles b=1", "cycles b=2", "ratio"], rows)

print("### Emitted stream replayed vs compiled on the fly")
print()
parts, equal = [], True
for label, fly, rep in [("convbnrelu, ax300", "cbr_tile", "replay_cbr"), ("bert_layer, a2", "a2_bert_layer", "replay_bert_a2"),
                        ("resnet50, a2", "a2_resnet50", "replay_r50_a2")]:
    a, b = S(fly), S(rep)
    equal = equal and a["total_ps"] == b["total_ps"] and a["total_cycles"] == b["total_cycles"]
    parts.append("%s %d vs %d ps (%d vs %d cycles)" % (label, a["total_ps"], b["total_ps"], a["total_cycles"], b["total_cycles"]))
print("On the fly vs replayed: %s: %s." % ("; ".join(parts), "all equal" if equal else "NOT all equal"))
print()

print("### Speed")
print()
with open(os.path.join(W, "speed.txt")) as f:
    times = [line.split() for line in f if line.strip()]
walls = [float(t[0]) for t in times]
rss = max(int(t[1]) for t in times) if times else 0
s = S("a2_resnet50")
print("`npusim run --chip configs/chips/a2.json --workload models/resnet50.json` (graph read, compiled to %d tasks and "
      "simulated): %s s wall (three runs; best %.2f s), peak RSS %d MB; %d CPUs (`nproc`)."
      % (s["compile"]["tasks"], ", ".join("%.2f" % w for w in walls), min(walls), rss // 1024, os.cpu_count() or 0))
PY
