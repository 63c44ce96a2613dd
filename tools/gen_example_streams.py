#!/usr/bin/python3
"""Writes the example task streams in traces/ (docs/design.md §4.3).

- convbnrelu_op.jsonl / convbnrelu_tile.jsonl: the ConvBNReLU reference case
  of docs/design.md §1.1 on ax300 ([1,64,56,56] fp16, 3x3 conv 64->128, BN folded),
  as 16 Cube sub-tasks per image (8 output-channel blocks x 2 spatial blocks)
  followed by a BN+ReLU Vector task per sub-task, for a batch of 2 images.
  Op-level sync: every Vector task waits for all 16 Cube tasks of its image
  (one counting event). Tile-level sync: each waits only for its own tile.
- copy_48core.jsonl: a memory-bound copy on all 48 vector cores of a2.

Run from the repository root: python3 tools/gen_example_streams.py
"""
import json
import os

import tool_args

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "traces")


def write(name, lines):
    with open(os.path.join(OUT, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def convbnrelu(sync):
    h = w = 56
    cin, cout, ksize = 64, 128, 3
    oc_blocks, spatial_blocks, images = 8, 2, 2
    cubes = vectors = 4
    m = h * w // spatial_blocks          # output pixels per sub-task
    k = cin * ksize * ksize              # im2col depth
    n = cout // oc_blocks                # output channels per sub-task
    in_bytes = cin * h * w * 2
    weight_bytes = cout * k * 2
    out_tile_bytes = m * n * 2
    # The cube builds the im2col matrix on-chip: A is read from GM once, as
    # the input rows of the spatial block plus a (ksize-1)-row halo.
    in_tile_bytes = cin * (h // spatial_blocks + ksize - 1) * w * 2
    lines = []
    if sync == "op":
        for b in range(images):
            lines.append({"event": f"conv{b}_done", "count": oc_blocks * spatial_blocks})
    task = 0
    for b in range(images):
        x_addr = 0x1000_0000 + b * in_bytes
        w_addr = 0x2000_0000
        y_addr = 0x3000_0000 + b * oc_blocks * spatial_blocks * out_tile_bytes
        z_addr = 0x4000_0000 + b * oc_blocks * spatial_blocks * out_tile_bytes
        for s in range(spatial_blocks):
            for oc in range(oc_blocks):
                t = s * oc_blocks + oc
                tile = f"oc{oc}/hw{s}"
                out = y_addr + t * out_tile_bytes
                signal = [f"conv{b}_done"] if sync == "op" else [f"conv{b}_t{t}"]
                lines.append({
                    "id": f"conv{b}_{t}", "core_type": "cube", "kernel": "matmul",
                    "stream": f"cube{task % cubes}", "wait": [], "signal": signal,
                    "op": "conv1+bn1", "tile": tile,
                    "params": {"m": m, "n": n, "k": k, "dtype": "fp16", "a_bytes": in_tile_bytes,
                               "src": "hbm", "dst": "hbm",
                               "addr": x_addr + s * (in_bytes // spatial_blocks), "out_addr": out,
                               "reads": [{"space": "hbm", "addr": x_addr + s * (in_bytes // spatial_blocks),
                                          "bytes": in_bytes // spatial_blocks},
                                         {"space": "hbm", "addr": w_addr + oc * (weight_bytes // oc_blocks),
                                          "bytes": weight_bytes // oc_blocks}],
                               "writes": [{"space": "hbm", "addr": out, "bytes": out_tile_bytes}]}})
                task += 1
        for t in range(oc_blocks * spatial_blocks):
            wait = [f"conv{b}_done"] if sync == "op" else [f"conv{b}_t{t}"]
            src = y_addr + t * out_tile_bytes
            dst = z_addr + t * out_tile_bytes
            lines.append({
                "id": f"relu{b}_{t}", "core_type": "vector", "kernel": "vector",
                "stream": f"vec{t % vectors}", "wait": wait, "signal": [],
                "op": "relu1", "tile": f"oc{t % oc_blocks}/hw{t // oc_blocks}",
                "params": {"bytes": out_tile_bytes, "cycles_per_repeat": 2, "src": "hbm", "dst": "hbm",
                           "addr": src, "out_addr": dst,
                           "reads": [{"space": "hbm", "addr": src, "bytes": out_tile_bytes}],
                           "writes": [{"space": "hbm", "addr": dst, "bytes": out_tile_bytes}]}})
    return lines


def copy48():
    lines = []
    mb = 1 << 20
    for core in range(48):
        for i in range(4):
            src = 0x1_0000_0000 + (core * 4 + i) * mb
            dst = 0x2_0000_0000 + (core * 4 + i) * mb
            lines.append({
                "id": f"copy{core}_{i}", "core_type": "vector", "kernel": "copy",
                "stream": f"vec{core}", "wait": [], "signal": [], "op": "copy",
                "params": {"bytes": mb, "src": "hbm", "dst": "hbm", "addr": src, "out_addr": dst,
                           "reads": [{"space": "hbm", "addr": src, "bytes": mb}],
                           "writes": [{"space": "hbm", "addr": dst, "bytes": mb}]}})
    return lines


if __name__ == "__main__":
    tool_args.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    write("convbnrelu_op.jsonl", convbnrelu("op"))
    write("convbnrelu_tile.jsonl", convbnrelu("tile"))
    write("copy_48core.jsonl", copy48())
