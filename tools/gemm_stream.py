#!/usr/bin/python3
"""Writes a task stream (.jsonl) of one fp16 GEMM M x N x K split over the
cube cores of a die: one matmul task per core over a grid of M x N blocks
(whole 16-element fractals, the remainder spread one fractal at a time).
A row block of A and a column block of B each have one address, so cores
sharing them hit in L2.  Usage: gemm_stream.py M N K CORES [OUT|-] [ROWS]"""
import json
import sys

import tool_args


def grid(cores):
    """The most square rows x cols grid with rows * cols == cores."""
    r = int(cores ** 0.5)
    while cores % r:
        r -= 1
    return r, cores // r


def split(extent, parts):
    fr = (extent + 15) // 16
    base, extra = divmod(fr, parts)
    out, start = [], 0
    for i in range(parts):
        size = min((base + (1 if i < extra else 0)) * 16, extent - start)
        out.append((start, size))
        start += size
    return out


def stream(m, n, k, cores, rows=0):
    if rows:
        cols = cores // rows
    else:
        rows, cols = grid(cores)
        if m < n:
            rows, cols = min(rows, cols), max(rows, cols)
        else:
            rows, cols = max(rows, cols), min(rows, cols)
    a_base, b_base, c_base = 1 << 32, 1 << 36, 1 << 40
    lines = []
    for i, (m0, ms) in enumerate(split(m, rows)):
        for j, (n0, ns) in enumerate(split(n, cols)):
            core = i * cols + j
            reads = [{"space": "hbm", "addr": a_base + m0 * k * 2, "bytes": ms * k * 2},
                     {"space": "hbm", "addr": b_base + n0 * k * 2, "bytes": ns * k * 2}]
            lines.append({"id": f"mm{core}", "core_type": "cube", "kernel": "matmul", "stream": f"s{core}",
                          "core": core, "wait": [], "signal": [],
                          "params": {"m": ms, "n": ns, "k": k, "dtype": "fp16", "reads": reads,
                                     "writes": [{"space": "hbm", "addr": c_base + (m0 * n + n0 * ms) * 2,
                                                 "bytes": ms * ns * 2}]}})
    return "\n".join(json.dumps(l) for l in lines) + "\n"


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(text)
    return v


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("  Usage:")[0])
    for name in ("m", "n", "k", "cores"):
        ap.add_argument(name, type=positive, metavar=name.upper())
    ap.add_argument("out", nargs="?", default="-", metavar="OUT", help="stream file, or - for stdout (the default)")
    ap.add_argument("rows", nargs="?", type=int, default=0, metavar="ROWS",
                    help="rows of the block grid (default 0: the most square grid)")
    a = ap.parse_args()
    text = stream(a.m, a.n, a.k, a.cores, a.rows)
    if a.out != "-":
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
