#!/usr/bin/python3
"""Writes the small ONNX models of models/onnx/ with python3-onnx's helper API
(docs/onnx.md): what an exporter writes, including the shape subgraphs
(Shape -> Gather -> Unsqueeze -> Concat -> Reshape) that npusim folds at import.

    /usr/bin/python3 tools/gen_onnx_models.py [OUT_DIR]     (default models/onnx)

Weights are zeros (cycle counts do not depend on values, and zeros keep the
files small in git). Each model has a symbolic batch (workload.batch binds
it); the transformer block also a symbolic sequence length `seq`
(workload.dims.seq).

The other two files there, gpt2_block.onnx and llama_block.onnx, are torch
exports: tools/export_torchvision_onnx.py writes them.
"""
import os

import tool_args
from debian_deps import require

np = require("numpy")
onnx = require("onnx")
helper = require("onnx.helper")
numpy_helper = require("onnx.numpy_helper")
TensorProto = onnx.TensorProto

OPSET = 17
# Output shapes as an exporter declares them (the importer re-infers them).
OUT_SHAPES = {"residual_block": ["batch", 64, 56, 56], "depthwise_block": ["batch", 32, 56, 56],
              "transformer_block": ["batch", "seq", 256], "decode_block": ["batch", 1, 256]}


class Builder:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inits, self.n = [], [], 0

    def weight(self, name, shape):
        self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name))
        return name

    def ints(self, name, values):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def scalar(self, name, value):
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        return name

    def op(self, op_type, inputs, name, outputs=None, **attrs):
        outputs = outputs or [name]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=name, **attrs))
        return outputs[0]

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="npusim gen_onnx_models")
        onnx.checker.check_model(m)
        return m


def conv_bn(b, x, cin, cout, k, name, stride=1, groups=1, act="Relu"):
    w = b.weight(f"{name}.weight", [cout, cin // groups, k, k])
    y = b.op("Conv", [x, w], f"{name}.conv", kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
             group=groups)
    bn = [b.weight(f"{name}.bn.{p}", [cout]) for p in ("scale", "bias", "mean", "var")]
    y = b.op("BatchNormalization", [y] + bn, f"{name}.bn", epsilon=1e-5)
    if act == "Relu":
        y = b.op("Relu", [y], f"{name}.relu")
    elif act == "Relu6":
        y = b.op("Clip", [y, b.scalar(f"{name}.min", 0.0), b.scalar(f"{name}.max", 6.0)], f"{name}.relu6")
    return y


def residual_block():
    """A ResNet basic block at [batch,64,56,56]: two 3x3 Conv+BN(+ReLU), identity shortcut, Add, ReLU."""
    b = Builder("residual_block")
    x = "x"
    y = conv_bn(b, x, 64, 64, 3, "conv1")
    y = conv_bn(b, y, 64, 64, 3, "conv2", act=None)
    y = b.op("Add", [y, x], "add")
    y = b.op("Relu", [y], "relu_out")
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64, 56, 56])],
                   [helper.make_tensor_value_info(y, TensorProto.FLOAT, OUT_SHAPES[b.name])])


def depthwise_block():
    """A MobileNetV2 inverted residual at [batch,32,56,56]: 1x1 expand to 192 + ReLU6, 3x3 depthwise
    (group 192) + ReLU6, 1x1 project to 32, shortcut Add."""
    b = Builder("depthwise_block")
    y = conv_bn(b, "x", 32, 192, 1, "expand", act="Relu6")
    y = conv_bn(b, y, 192, 192, 3, "depthwise", groups=192, act="Relu6")
    y = conv_bn(b, y, 192, 32, 1, "project", act=None)
    y = b.op("Add", [y, "x"], "add")
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 32, 56, 56])],
                   [helper.make_tensor_value_info(y, TensorProto.FLOAT, OUT_SHAPES[b.name])])


def transformer_block(hidden=256, heads=4, ffn=1024):
    """A pre-norm transformer encoder block on [batch,seq,hidden] with an additive attention mask
    [batch,1,seq,seq], written as torch.onnx.export writes one: head reshapes from Shape/Gather/Concat
    subgraphs, scale by Div, GELU in its Erf form, LayerNormalization (opset 17)."""
    b = Builder("transformer_block")
    d = hidden // heads

    def linear(x, cin, cout, name):
        y = b.op("MatMul", [x, b.weight(f"{name}.weight", [cin, cout])], f"{name}.matmul")
        return b.op("Add", [y, b.weight(f"{name}.bias", [cout])], f"{name}.bias_add")

    def layer_norm(x, name):
        return b.op("LayerNormalization", [x, b.weight(f"{name}.weight", [hidden]), b.weight(f"{name}.bias", [hidden])],
                    name, axis=-1, epsilon=1e-5)

    # [batch, seq] from the input's shape, as exporters compute it.
    shape = b.op("Shape", ["x"], "shape")
    batch = b.op("Gather", [shape, b.ints("idx0", 0)], "gather_batch", axis=0)
    seq = b.op("Gather", [shape, b.ints("idx1", 1)], "gather_seq", axis=0)
    ub = b.op("Unsqueeze", [batch, b.ints("axes0", [0])], "unsqueeze_batch")
    us = b.op("Unsqueeze", [seq, b.ints("axes0b", [0])], "unsqueeze_seq")
    heads_shape = b.op("Concat", [ub, us, b.ints("heads_d", [heads, d])], "heads_shape", axis=0)
    merged_shape = b.op("Concat", [ub, us, b.ints("hidden_c", [hidden])], "merged_shape", axis=0)

    h = layer_norm("x", "ln1")
    q, k, v = (linear(h, hidden, hidden, n) for n in ("q", "k", "v"))
    q, k, v = (b.op("Reshape", [t, heads_shape], f"{n}.split_heads") for t, n in ((q, "q"), (k, "k"), (v, "v")))
    q = b.op("Transpose", [q], "q.transpose", perm=[0, 2, 1, 3])
    kt = b.op("Transpose", [k], "k.transpose", perm=[0, 2, 3, 1])
    v = b.op("Transpose", [v], "v.transpose", perm=[0, 2, 1, 3])
    s = b.op("MatMul", [q, kt], "scores")
    s = b.op("Div", [s, b.scalar("sqrt_d", float(np.sqrt(d)))], "scale")
    s = b.op("Add", [s, "mask"], "mask_add")
    p = b.op("Softmax", [s], "softmax", axis=-1)
    ctx = b.op("MatMul", [p, v], "context")
    ctx = b.op("Transpose", [ctx], "context.transpose", perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, merged_shape], "context.merge_heads")
    x1 = b.op("Add", ["x", linear(ctx, hidden, hidden, "out")], "residual1")

    h = layer_norm(x1, "ln2")
    h = linear(h, hidden, ffn, "fc1")
    # GELU, Erf form: 0.5 * x * (1 + erf(x / sqrt(2))).
    g = b.op("Div", [h, b.scalar("sqrt2", float(np.sqrt(2.0)))], "gelu.div")
    g = b.op("Erf", [g], "gelu.erf")
    g = b.op("Add", [g, b.scalar("one", 1.0)], "gelu.add")
    g = b.op("Mul", [h, g], "gelu.mul")
    g = b.op("Mul", [g, b.scalar("half", 0.5)], "gelu.half")
    y = b.op("Add", [x1, linear(g, ffn, hidden, "fc2")], "residual2")
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", hidden]),
                    helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, "seq", "seq"])],
                   [helper.make_tensor_value_info(y, TensorProto.FLOAT, OUT_SHAPES[b.name])])


def decode_block(hidden=256, heads=4, ffn=704):
    """One decode step of a Llama-style block on [batch,1,hidden] with a KV cache [batch,heads,past,d], as an
    LLM export writes it: RMSNorm decomposed (Pow, ReduceMean, Add, Sqrt, Div, Mul), rotary embeddings in the
    rotate-half form (Slice, Neg, Concat, Mul by cos / sin, Add), the cache update as a Concat on the past
    keys and values (present_k / present_v are outputs), attention over past + 1 keys, a SiLU-gated MLP."""
    b = Builder("decode_block")
    d = hidden // heads

    def rms_norm(x, name):
        sq = b.op("Pow", [x, b.scalar(f"{name}.two", 2.0)], f"{name}.pow")
        mean = b.op("ReduceMean", [sq], f"{name}.mean", axes=[-1])
        var = b.op("Add", [mean, b.scalar(f"{name}.eps", 1e-6)], f"{name}.add_eps")
        rms = b.op("Sqrt", [var], f"{name}.sqrt")
        y = b.op("Div", [x, rms], f"{name}.div")
        return b.op("Mul", [y, b.weight(f"{name}.weight", [hidden])], f"{name}.scale")

    def linear(x, cin, cout, name):
        return b.op("MatMul", [x, b.weight(f"{name}.weight", [cin, cout])], name)

    def heads_of(t, name):
        t = b.op("Reshape", [t, b.ints(f"{name}.shape", [0, 1, heads, d])], f"{name}.split_heads")
        return b.op("Transpose", [t], f"{name}.transpose", perm=[0, 2, 1, 3])

    def rope(t, name):
        half = b.op("Slice", [t, b.ints(f"{name}.s0", [0]), b.ints(f"{name}.s1", [d // 2]), b.ints(f"{name}.ax", [3])],
                    f"{name}.rot.lo")
        upper = b.op("Slice", [t, b.ints(f"{name}.s2", [d // 2]), b.ints(f"{name}.s3", [d]), b.ints(f"{name}.ax2", [3])],
                     f"{name}.rot.hi")
        neg = b.op("Neg", [upper], f"{name}.rot.neg")
        rot = b.op("Concat", [neg, half], f"{name}.rot.cat", axis=-1)
        c = b.op("Mul", [t, b.weight(f"{name}.cos", [1, 1, 1, d])], f"{name}.rope.cos")
        s_ = b.op("Mul", [rot, b.weight(f"{name}.sin", [1, 1, 1, d])], f"{name}.rope.sin")
        return b.op("Add", [c, s_], f"{name}.rope")

    h = rms_norm("x", "attn_norm")
    q = rope(heads_of(linear(h, hidden, hidden, "q_proj"), "q"), "q")
    k = rope(heads_of(linear(h, hidden, hidden, "k_proj"), "k"), "k")
    v = heads_of(linear(h, hidden, hidden, "v_proj"), "v")
    k = b.op("Concat", ["past_k", k], "present_k", axis=2)
    v = b.op("Concat", ["past_v", v], "present_v", axis=2)
    kt = b.op("Transpose", [k], "k.cache_t", perm=[0, 1, 3, 2])
    s = b.op("MatMul", [q, kt], "scores")
    s = b.op("Div", [s, b.scalar("sqrt_d", float(np.sqrt(d)))], "scale")
    p = b.op("Softmax", [s], "softmax", axis=-1)
    ctx = b.op("MatMul", [p, v], "context")
    ctx = b.op("Transpose", [ctx], "context.transpose", perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.ints("merged", [0, 1, hidden])], "context.merge_heads")
    x1 = b.op("Add", ["x", linear(ctx, hidden, hidden, "o_proj")], "residual1")

    h = rms_norm(x1, "mlp_norm")
    gate = linear(h, hidden, ffn, "gate_proj")
    gate = b.op("Mul", [gate, b.op("Sigmoid", [gate], "gate.sigmoid")], "gate.silu")
    up = linear(h, hidden, ffn, "up_proj")
    y = b.op("Add", [x1, linear(b.op("Mul", [gate, up], "gate.mul"), ffn, hidden, "down_proj")], "residual2")
    cache = ["batch", heads, "past", d]
    present = ["batch", heads, "past_plus_1", d]
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, hidden]),
                    helper.make_tensor_value_info("past_k", TensorProto.FLOAT, cache),
                    helper.make_tensor_value_info("past_v", TensorProto.FLOAT, cache)],
                   [helper.make_tensor_value_info(y, TensorProto.FLOAT, OUT_SHAPES[b.name]),
                    helper.make_tensor_value_info("present_k", TensorProto.FLOAT, present),
                    helper.make_tensor_value_info("present_v", TensorProto.FLOAT, present)])


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "models", "onnx"),
                    help="folder to write the models into (default models/onnx)")
    out = ap.parse_args().out_dir
    os.makedirs(out, exist_ok=True)
    for make in (residual_block, depthwise_block, transformer_block, decode_block):
        m = make()
        path = os.path.join(out, m.graph.name + ".onnx")
        onnx.save(m, path)
        print(f"{path}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
