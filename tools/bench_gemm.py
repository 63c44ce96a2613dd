#!/usr/bin/python3
"""GEMM ladder: achieved TFLOPS and % of the Cube peak of a die for fp16
GEMMs split one task per cube core (tools/gemm_stream.py), and for the same
product as a MatMul graph the compiler tiles (ND input and output: on a
chip whose Cube converts on the way, chip.cores.cube.mte2_nd2nz and
fixpipe_nz2nd, no layout conversion; last, the graph with both keys off, its
conversions as TransData tasks on the Vector cores).
Peak = cube cores x 16*16*16*2 FLOP/cycle x clock.
Usage: bench_gemm.py [NPUSIM] [CHIP]   (defaults build/npusim, configs/chips/a2.json)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_stream  # noqa: E402
import tool_args  # noqa: E402

LADDER = [(128, 128, 128), (512, 512, 512), (1000, 1000, 1000), (1024, 1024, 1024), (2048, 2048, 2048),
          (4096, 4096, 4096), (8192, 8192, 8192), (512, 8192, 8192), (8192, 8192, 512)]


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\nUsage:")[0],
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("npusim", nargs="?", default="build/npusim", help="the binary (default build/npusim)")
    ap.add_argument("chip", nargs="?", default="configs/chips/a2.json", help="chip file (default configs/chips/a2.json)")
    a = ap.parse_args()
    npusim, chip_file = a.npusim, a.chip
    chip = json.load(open(chip_file))
    cubes, clock = chip["cores"]["cube"]["count"], chip["clock_ghz"]
    peak = cubes * 16 * 16 * 16 * 2 * clock / 1000.0  # TFLOPS
    print(f"{os.path.basename(chip_file)}: {cubes} cube cores at {clock} GHz, fp16 peak {peak:.1f} TFLOPS")
    print(f"{'':>20} {'one task per core':>27}   {'compiled MatMul graph':>27}   {'compiled, TransData on Vector':>29}")
    print(f"{'M':>6} {'N':>6} {'K':>6}" + f" {'cycles':>10} {'TFLOPS':>8} {'% peak':>7}  " * 3)
    transdata_on_vector = ["--set", "chip.cores.cube.mte2_nd2nz=false", "--set", "chip.cores.cube.fixpipe_nz2nd=false"]
    with tempfile.TemporaryDirectory() as tmp:
        for m, n, k in LADDER:
            stream, graph, stats = (os.path.join(tmp, f) for f in ("g.jsonl", "g.json", "s.json"))
            open(stream, "w").write(gemm_stream.stream(m, n, k, cubes))
            # The same product as a framework would hand it over: ND input
            # and output, weights const.
            json.dump({"kind": "graph", "name": "gemm",
                       "tensors": {"a": {"shape": [m, k], "input": True}, "w": {"shape": [k, n], "const": True}},
                       "nodes": [{"name": "mm", "op": "MatMul", "inputs": ["a", "w"], "outputs": ["y"]}],
                       "outputs": ["y"]}, open(graph, "w"))
            row = f"{m:>6} {n:>6} {k:>6}"
            for workload, sets in ((stream, []), (graph, []), (graph, transdata_on_vector)):
                subprocess.run([npusim, "run", "--chip", chip_file, "--workload", workload, "--stats", stats] + sets,
                               check=True, stdout=subprocess.DEVNULL)
                cycles = json.load(open(stats))["total_cycles"]
                tflops = 2.0 * m * n * k / (cycles / clock) / 1000.0
                row += f" {cycles:>10.0f} {tflops:>8.1f} {100 * tflops / peak:>6.1f}%  "
            print(row.rstrip(), flush=True)


if __name__ == "__main__":
    main()
