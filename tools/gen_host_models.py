#!/usr/bin/python3
"""Writes the host-runtime workloads (docs/design.md §1.2, §4.6, docs/host.md) into models/:

    host_smallops.json  many small element-wise and reshape ops with dynamic
                        shapes; a value-dependent Reshape in the middle, a
                        value-dependent ReduceSum, compute-dependent NonZero
                        and Unique
    llm_decode.json     one decode step of a small decoder-only LLM, batch 1,
                        short KV cache; value-dependent Reshape (input shape)
                        and ReduceSum (sampling), compute-dependent Unique
                        (repetition penalty) and NonZero (top-p filter)

    host_hetero.json    a hetero-mode demonstration: a chain of small
                        dynamic-shape CPU ops beside an NPU branch of MatMuls
                        with no data dependence, joined at the end

The first two run kernel by kernel (one kernel per framework op: vector fusion off,
Cube/Vector fusion split) under workload.host_mode = sync by default.

Usage: tools/gen_host_models.py [OUT_DIR]   (default: models/ next to tools/)
Python 3 standard library only.
"""
import json
import os

import tool_args

KBK = {"host_mode": "sync", "dynamic_shapes": True, "submit_batch": 16,
       "passes": {"fuse_vector": False}, "fusion_boundary": "split"}


class Graph:
    def __init__(self, name, dims, notes, workload):
        self.name, self.dims, self.notes, self.workload = name, dims, notes, workload
        self.tensors = {}
        self.nodes = []
        self.outputs = []

    def input(self, name, shape, dtype="fp16"):
        self.tensors[name] = {"shape": list(shape), "dtype": dtype, "input": True}
        return name

    def const(self, name, shape, dtype="fp16"):
        self.tensors[name] = {"shape": list(shape), "dtype": dtype, "const": True}
        return name

    def node(self, name, op, inputs, shape=None, attrs=None, device=None):
        assert name not in self.tensors, name
        if shape is not None:
            self.tensors[name] = {"shape": list(shape)}
        n = {"name": name, "op": op, "inputs": list(inputs), "outputs": [name]}
        if attrs:
            n["attrs"] = attrs
        if device:
            n["device"] = device
        self.nodes.append(n)
        return name

    def dump(self, path):
        d = json.dumps
        lines = ["{", '  "kind": "graph",', '  "name": %s,' % d(self.name), '  "notes": %s,' % d(self.notes),
                 '  "dims": %s,' % d(self.dims), '  "workload": %s,' % d(self.workload), '  "tensors": {']
        items = list(self.tensors.items())
        for i, (k, v) in enumerate(items):
            lines.append("    %s: %s%s" % (d(k), d(v), "," if i + 1 < len(items) else ""))
        lines += ["  },", '  "nodes": [']
        for i, n in enumerate(self.nodes):
            lines.append("    %s%s" % (d(n), "," if i + 1 < len(self.nodes) else ""))
        lines += ["  ],", '  "outputs": %s' % d(self.outputs), "}"]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def host_smallops():
    g = Graph("host_smallops", {"batch": 1},
              "Host-bound workload (docs/design.md §1.2): 8 blocks of small element-wise ops on [batch,128,64] fp16 "
              "(Mul, Add, Sigmoid, Mul = SiLU, a Reshape view, a Transpose, a broadcast Mul by the mask, a residual "
              "Add), run kernel by kernel with dynamic shapes. Value-dependent: after block 3 a Reshape whose shape "
              "comes from a device tensor (shape_calc), and at the end a ReduceSum whose axes come from a device "
              "tensor (axes_calc): both drain the host queues. Compute-dependent: NonZero of the mask after block 5 "
              "and Unique of the tokens (after block 1): the host waits for their kernels. The token branch (tokens_flat, unique, unique_shift) is labelled \"device\": \"cpu\": the CPU subgraph of hetero mode. attrs.shape / attrs.axes are "
              "the values those tensors hold at run time; attrs.expected the data-dependent output size. "
              "Written by tools/gen_host_models.py.",
              KBK)
    x = g.input("x", ["batch", 128, 64])
    mask = g.input("mask", ["batch", 128])
    tokens = g.input("tokens", ["batch", 128])
    shape_off = g.input("shape_offset", [3], "fp32")
    shape_base = g.const("shape_base", [3], "fp32")
    axes_off = g.input("axes_offset", [1], "fp32")
    axes_base = g.const("axes_base", [1], "fp32")
    mask3 = g.node("mask3", "Reshape", [mask], ["batch", 128, 1], {"shape": ["batch", 128, 1]})
    h = x
    outs = []
    for i in range(8):
        p = "b%d." % i
        s = g.const(p + "scale", [64])
        b = g.const(p + "bias", [64])
        a = g.node(p + "mul", "Mul", [h, s], ["batch", 128, 64])
        a = g.node(p + "add", "Add", [a, b], ["batch", 128, 64])
        sg = g.node(p + "sigmoid", "Sigmoid", [a], ["batch", 128, 64])
        si = g.node(p + "silu", "Mul", [a, sg], ["batch", 128, 64])
        r = g.node(p + "view", "Reshape", [si], ["batch", 64, 128], {"shape": ["batch", 64, 128]})
        t = g.node(p + "transpose", "Transpose", [r], ["batch", 128, 64], {"perm": [0, 2, 1]})
        m = g.node(p + "masked", "Mul", [t, mask3], ["batch", 128, 64])
        h = g.node(p + "residual", "Add", [m, h], ["batch", 128, 64])
        if i == 1:
            # The token branch is independent of the main chain: the CPU subgraph in hetero mode.
            flat = g.node("tokens_flat", "Reshape", [tokens], ["128*batch"], {"shape": ["128*batch"]}, device="cpu")
            u = g.node("unique", "Unique", [flat], [48], {"expected": 48}, device="cpu")
            ub = g.const("unique_bias", [1])
            uniq = g.node("unique_shift", "Add", [u, ub], [48], device="cpu")
        if i == 3:
            shp = g.node("shape_calc", "Add", [shape_base, shape_off], [3])
            hv = g.node("dyn_reshape", "Reshape", [h, shp], ["batch", 32, 256], {"shape": ["batch", 32, 256]})
            c = g.const("dyn_scale", [256])
            hn = g.node("dyn_mul", "Mul", [hv, c], ["batch", 32, 256])
            h = g.node("dyn_back", "Reshape", [hn], ["batch", 128, 64], {"shape": ["batch", 128, 64]})
        if i == 5:
            nz = g.node("nonzero", "NonZero", [mask], [2, "96*batch"], {"expected": ["96*batch"]})
            sc = g.const("nonzero_scale", [1], "fp32")
            outs.append(g.node("nonzero_index", "Mul", [nz, sc], [2, "96*batch"]))
    ax = g.node("axes_calc", "Add", [axes_base, axes_off], [1])
    outs.insert(0, g.node("pooled", "ReduceSum", [h, ax], ["batch", 1, 64], {"axes": [1], "keepdims": 1}))
    outs.append(uniq)
    g.outputs = outs
    return g


def llm_decode(layers=4, hidden=2048, heads=16, ffn=5632, vocab=32000):
    hd = hidden // heads
    g = Graph("llm_decode", {"batch": 1, "past": 127, "seq": 128},
              "One decode step of a small decoder-only LLM (%d layers, hidden %d, %d heads of %d, SiLU-gated FFN %d, "
              "vocab %d), batch 1, KV cache of `past` tokens (`seq` must be past + 1). Per layer: LayerNorm, Q/K/V "
              "MatMuls, head Reshape views and Transposes, a rotary Mul, KV-cache Concats, BatchMatMul scores, scale, "
              "mask Add, Softmax, BatchMatMul context, output MatMul, residual Add, LayerNorm, gate/up MatMuls, SiLU "
              "(Sigmoid, Mul), Mul, down MatMul, residual Add. Value-dependent: the input embedding is reshaped by "
              "a shape computed on the device (pos_shape), and sampling normalises with a ReduceSum whose axes come "
              "from a device tensor (sample_axes). Compute-dependent: Unique of the previous tokens (repetition "
              "penalty; with its Mul labelled \"device\": \"cpu\", the CPU subgraph of hetero mode) and NonZero of the probabilities (top-p candidates). Run kernel by kernel with dynamic "
              "shapes (the cache grows every step). Written by tools/gen_host_models.py."
              % (layers, hidden, heads, hd, ffn, vocab),
              KBK)
    emb = g.input("embedding", ["batch", hidden])
    shape_off = g.input("pos_shape_offset", [3], "fp32")
    shape_base = g.const("pos_shape_base", [3], "fp32")
    mask = g.input("attn_mask", ["batch", 1, 1, "seq"])
    prev = g.input("prev_tokens", ["batch*past"])
    rope = g.const("rope", [1, 1, 1, hd])
    scale = g.const("attn_scale", [1])
    shp = g.node("pos_shape", "Add", [shape_base, shape_off], [3])
    h = g.node("hidden_in", "Reshape", [emb, shp], ["batch", 1, hidden], {"shape": ["batch", 1, hidden]})
    outs = []
    for l in range(layers):
        p = "l%d." % l

        def W(n, shape):
            return g.const(p + n, shape)

        pk = g.input(p + "past_k", ["batch", heads, "past", hd])
        pv = g.input(p + "past_v", ["batch", heads, "past", hd])
        ln1 = g.node(p + "ln1", "LayerNorm", [h, W("ln1.gamma", [hidden]), W("ln1.beta", [hidden])], ["batch", 1, hidden],
                     {"axis": -1, "epsilon": 1e-6})
        heads_of = {}
        for n in ("q", "k", "v"):
            y = g.node(p + n, "MatMul", [ln1, W(n + ".weight", [hidden, hidden])], ["batch", 1, hidden])
            y = g.node(p + n + "_heads", "Reshape", [y], ["batch", 1, heads, hd], {"shape": ["batch", 1, heads, hd]})
            heads_of[n] = g.node(p + n + "_t", "Transpose", [y], ["batch", heads, 1, hd], {"perm": [0, 2, 1, 3]})
        q = g.node(p + "q_rope", "Mul", [heads_of["q"], rope], ["batch", heads, 1, hd])
        k = g.node(p + "k_rope", "Mul", [heads_of["k"], rope], ["batch", heads, 1, hd])
        kc = g.node(p + "k_cache", "Concat", [pk, k], ["batch", heads, "seq", hd], {"axis": 2})
        vc = g.node(p + "v_cache", "Concat", [pv, heads_of["v"]], ["batch", heads, "seq", hd], {"axis": 2})
        outs += [kc, vc]
        s = g.node(p + "scores", "BatchMatMul", [q, kc], ["batch", heads, 1, "seq"], {"transpose_b": 1})
        s = g.node(p + "scaled", "Mul", [s, scale], ["batch", heads, 1, "seq"])
        s = g.node(p + "masked", "Add", [s, mask], ["batch", heads, 1, "seq"])
        pr = g.node(p + "probs", "Softmax", [s], ["batch", heads, 1, "seq"], {"axis": -1})
        c = g.node(p + "context", "BatchMatMul", [pr, vc], ["batch", heads, 1, hd])
        c = g.node(p + "context_t", "Transpose", [c], ["batch", 1, heads, hd], {"perm": [0, 2, 1, 3]})
        c = g.node(p + "context_flat", "Reshape", [c], ["batch", 1, hidden], {"shape": ["batch", 1, hidden]})
        o = g.node(p + "o", "MatMul", [c, W("o.weight", [hidden, hidden])], ["batch", 1, hidden])
        h1 = g.node(p + "residual1", "Add", [h, o], ["batch", 1, hidden])
        ln2 = g.node(p + "ln2", "LayerNorm", [h1, W("ln2.gamma", [hidden]), W("ln2.beta", [hidden])],
                     ["batch", 1, hidden], {"axis": -1, "epsilon": 1e-6})
        gt = g.node(p + "gate", "MatMul", [ln2, W("gate.weight", [hidden, ffn])], ["batch", 1, ffn])
        up = g.node(p + "up", "MatMul", [ln2, W("up.weight", [hidden, ffn])], ["batch", 1, ffn])
        sg = g.node(p + "gate_sigmoid", "Sigmoid", [gt], ["batch", 1, ffn])
        si = g.node(p + "gate_silu", "Mul", [gt, sg], ["batch", 1, ffn])
        gu = g.node(p + "gate_up", "Mul", [si, up], ["batch", 1, ffn])
        dn = g.node(p + "down", "MatMul", [gu, W("down.weight", [ffn, hidden])], ["batch", 1, hidden])
        h = g.node(p + "residual2", "Add", [h1, dn], ["batch", 1, hidden])
        if l == 1:
            # Repetition penalty: independent of the layers; the CPU subgraph in hetero mode.
            uq = g.node("seen_tokens", "Unique", [prev], [64], {"expected": 64}, device="cpu")
            pen = g.node("penalty", "Mul", [uq, g.const("penalty_scale", [1])], [64], device="cpu")
    lnf = g.node("final_ln", "LayerNorm", [h, g.const("final_ln.gamma", [hidden]), g.const("final_ln.beta", [hidden])],
                 ["batch", 1, hidden], {"axis": -1, "epsilon": 1e-6})
    logits = g.node("lm_head", "MatMul", [lnf, g.const("lm_head.weight", [hidden, vocab])], ["batch", 1, vocab])
    probs = g.node("sample_probs", "Softmax", [logits], ["batch", 1, vocab], {"axis": -1})
    ax = g.node("sample_axes", "Add", [g.const("sample_axes_base", [1], "fp32"), g.input("sample_axes_offset", [1], "fp32")],
                [1])
    norm = g.node("sample_norm", "ReduceSum", [probs, ax], ["batch", 1, 1], {"axes": [-1], "keepdims": 1})
    nz = g.node("top_p", "NonZero", [probs], [3, 40], {"expected": 40})
    sel = g.node("top_p_index", "Mul", [nz, g.const("top_p_scale", [1], "fp32")], [3, 40])
    g.outputs = [norm, sel, pen] + outs
    return g


def host_hetero(cpu_chain=12):
    g = Graph("host_hetero", {"batch": 1},
              "Hetero-mode demonstration (docs/design.md §1.2, docs/host.md): an NPU branch of four MatMuls with a Sigmoid "
              "and a CPU branch of %d small dynamic-shape element-wise ops (labelled \"device\": \"cpu\"; bookkeeping the "
              "NPU gains nothing on) on a column statistic of the first MatMul (device -> host), which runs while the "
              "NPU computes the rest; its end is a graph output. A CPU gate (cpu_gate, Sigmoid) on a column sum of the "
              "NPU result (device -> host -> device) scales it before the residual Add. Dynamic shapes: in "
              "pipeline mode every small op pays the whole device launch path (frontend, prepare, InferShape, Resize, "
              "Launch); in hetero mode it pays the frontend and a queue hand-over, then runs on a CPU worker while the "
              "NPU computes. configs/studies/hetero_cpu_cost.json sweeps the CPU-op cost to where hetero stops paying. "
              "Written by tools/gen_host_models.py." % cpu_chain,
              {"host_mode": "hetero", "dynamic_shapes": True, "submit_batch": 16,
               "passes": {"fuse_vector": False}, "fusion_boundary": "split"})
    x = g.input("x", ["256*batch", 1024])
    y = g.node("mm1", "MatMul", [x, g.const("w1", [1024, 2048])], ["256*batch", 2048])
    # A routing-style statistic of the first MatMul goes to the CPU (device -> host) ...
    st = g.node("col_stat", "ReduceSum", [y], [1, 2048], {"axes": [0], "keepdims": 1})
    y = g.node("act", "Sigmoid", [y], ["256*batch", 2048])
    y = g.node("mm2", "MatMul", [y, g.const("w2", [2048, 1024])], ["256*batch", 1024])
    r = g.node("mm3", "MatMul", [y, g.const("w3", [1024, 1024])], ["256*batch", 1024])
    r = g.node("mm4", "MatMul", [r, g.const("w4", [1024, 1024])], ["256*batch", 1024])
    # ... where a chain of small ops works on it while the NPU computes; its end is a graph output.
    ops = ["Sigmoid", "Mul", "Add", "ReLU"]
    s = st
    for i in range(cpu_chain):
        op = ops[i % len(ops)]
        ins = [s] if op in ("Sigmoid", "ReLU") else [s, s]
        s = g.node("cpu_%d" % i, op, ins, [1, 2048], device="cpu")
    # A CPU op between NPU ops: the gate on a column sum of the NPU result (device -> host -> device).
    col = g.node("row_sum", "ReduceSum", [y], [1, 1024], {"axes": [0], "keepdims": 1})
    gate = g.node("cpu_gate", "Sigmoid", [col], [1, 1024], device="cpu")
    r = g.node("gated", "Mul", [r, gate], ["256*batch", 1024])
    g.outputs = [g.node("out", "Add", [r, y], ["256*batch", 1024]), s]
    return g


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"),
                    help="folder to write the models into (default: models/ next to tools/)")
    out = ap.parse_args().out_dir
    os.makedirs(out, exist_ok=True)
    for g in (host_smallops(), llm_decode(), host_hetero()):
        path = os.path.join(out, g.name + ".json")
        g.dump(path)
        print("wrote", os.path.normpath(path), "(%d nodes)" % len(g.nodes))


if __name__ == "__main__":
    main()
