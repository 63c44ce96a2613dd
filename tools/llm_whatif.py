#!/usr/bin/python3
"""What-if responses of an LLM serving step at reduced size (docs/validation.md,
"LLM serving: what-if at system scale"): one parameter changed at a time
against a base run, the response of the step time and of tokens/s per die,
the sign physics expects, and a verdict.

Decode: DeepSeek-V3 (models/llm/deepseek_v3.json), 5 layers (3 dense + 2 MoE),
32 dies, 16 sequences per die over a 2 K cache, EP 32 (8 experts per die).
Prefill: the same model, 5 layers, 16 dies, one 2 K-token prompt per die.

With --full, instead a few points at full width: the run file's own decode
deployment (288 dies, 48 sequences per die over a 4 K cache, EP 288, two
micro-batches) over its first 4 layers (3 dense + 1 MoE), as `npusim bench
--llm --layers 4` runs it (about 1.5 min a run on two cores).

Usage: llm_whatif.py [--npusim build/npusim] [--out out/llm_whatif] [--markdown] [--full]
Runs are kept in OUT (a run whose stats exist is not repeated)."""
import argparse
import json
import os
import subprocess
import sys

import tool_args

CHIP = "configs/chips/a3-supernode.json"
RUN = "models/llm/deepseek_v3.json"

DECODE = ["chip.interconnect.ranks=32", "workload.layers=5", "workload.batch=16", "workload.kv_len=2048",
          "workload.routing.redundant_experts=0"]
PREFILL = ["chip.interconnect.ranks=16", "workload.phase=prefill", "workload.layers=5", "workload.batch=2",
           "workload.prompt_len=2048", "workload.routing.redundant_experts=0"]

# (label, phase, --set list, expected sign of the step time's change: -1 faster, +1 slower, 0 either).
CASES = [
    ("HBM bandwidth x2", "decode", ["chip.hbm.bandwidth_gbps=3200"], -1),
    ("HBM bandwidth x0.5", "decode", ["chip.hbm.bandwidth_gbps=800"], +1),
    ("plane bandwidth x0.5", "decode", ["chip.interconnect.intra_node.plane_bandwidth_gbps=14",
                                        "chip.interconnect.inter_node.plane_bandwidth_gbps=14"], +1),
    ("link latency x2", "decode", ["chip.interconnect.intra_node.latency_ns=1000",
                                   "chip.interconnect.inter_node.latency_ns=2000"], +1),
    ("AIC 24 -> 20 (moe stream 8 -> 4)", "decode", ["chip.cores.cube.count=20", "workload.streams.moe.cube=4"], +1),
    ("AIV 48 -> 40 (moe stream 16 -> 8)", "decode", ["chip.cores.vector.count=40", "workload.streams.moe.vector=8"], +1),
    ("batch 16 -> 32", "decode", ["workload.batch=32"], +1),
    ("KV length 2 K -> 4 K", "decode", ["workload.kv_len=4096"], +1),
    ("EP 32 -> 16 (16 experts per die)", "decode", ["workload.ep=16"], +1),
    ("one micro-batch", "decode", ["workload.microbatches=1"], 0),
    ("HBM bandwidth x0.5", "prefill", ["chip.hbm.bandwidth_gbps=800"], +1),
    ("AIC 24 -> 20 (moe stream 8 -> 4)", "prefill", ["chip.cores.cube.count=20", "workload.streams.moe.cube=4"], +1),
    ("prompt 2 K -> 1 K", "prefill", ["workload.prompt_len=1024"], -1),
    ("one micro-batch", "prefill", ["workload.microbatches=1"], 0),
]

FULL = ["workload.layers=4"]
FULL_CASES = [
    ("HBM bandwidth x0.5", "full", ["chip.hbm.bandwidth_gbps=800"], +1),
    ("batch 48 -> 24", "full", ["workload.batch=24"], -1),
    ("one micro-batch", "full", ["workload.microbatches=1"], 0),
]

LABEL = {"decode": "decode", "prefill": "prefill", "full": "decode at 288 dies"}


def run(npusim, out, name, sets):
    stats = os.path.join(out, name + ".json")
    if not os.path.exists(stats):
        cmd = [npusim, "run", "--chip", CHIP, "--workload", RUN, "--stats", stats, "-q"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"llm_whatif: {name}: {r.stderr.strip()}")
    with open(stats) as f:
        return json.load(f)["llm"]


def main():
    ap = tool_args.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npusim", default="build/npusim")
    ap.add_argument("--out", default="out/llm_whatif")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--full", action="store_true", help="a few points at full width instead (FULL_CASES)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    phases = {"full": FULL} if a.full else {"decode": DECODE, "prefill": PREFILL}
    base = {p: run(a.npusim, a.out, f"{p}_base", sets) for p, sets in phases.items()}
    rows, misses = [], 0
    for i, (label, phase, sets, sign) in enumerate(FULL_CASES if a.full else CASES):
        b = base[phase]
        r = run(a.npusim, a.out, f"{phase}_{i}", phases[phase] + sets)
        step = r["step_ns"] / b["step_ns"] - 1
        tps = r["tokens_per_s_per_die"] / b["tokens_per_s_per_die"] - 1
        got = 0 if abs(step) < 0.002 else (1 if step > 0 else -1)
        verdict = "ok" if sign == 0 or got == sign else ("flat" if got == 0 else "WRONG SIGN")
        misses += verdict != "ok"
        rows.append((phase, label, {1: "slower", -1: "faster", 0: "either"}[sign], step, tps, verdict))
    if a.markdown:
        print("| phase | change | expected step | step time | tokens/s per die | verdict |")
        print("|---|---|---|---|---|---|")
        for phase, label, exp, step, tps, verdict in rows:
            print(f"| {LABEL[phase]} | {label} | {exp} | {100 * step:+.1f}% | {100 * tps:+.1f}% | {verdict} |")
        print()
        for p, b in base.items():
            print(f"- Base {LABEL[p]}: step {b['step_ns'] / 1000:.1f} us, {b['tokens_per_s_per_die']:.0f} tokens/s per die, "
                  f"shares " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in b["op_time_shares"].items()))
    else:
        for phase, label, exp, step, tps, verdict in rows:
            print(f"{phase:8} {label:40} expected {exp:7} step {100 * step:+6.1f}%  tokens/s {100 * tps:+6.1f}%  {verdict}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
