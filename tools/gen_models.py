#!/usr/bin/python3
"""Writes the bundled model graphs (docs/graph-format.md) into models/:

    convbnrelu.json   the docs/design.md §1.1 reference: 3x3 conv 64->128 + BN + ReLU
    resnet50.json     ResNet-50 v1.5, 224x224
    bert_layer.json   one BERT-base encoder layer
    segnet.json       a small encoder-decoder segmentation network

Usage: tools/gen_models.py [OUT_DIR]   (default: models/ next to tools/)

Every tensor's shape is written out (symbolically, in terms of the graph's
"dims"), so the simulator's shape inference double-checks this script.
Python 3 standard library only.
"""
import argparse
import json
import os

import tool_args


class Graph:
    def __init__(self, name, dims, notes):
        self.name = name
        self.dims = dims
        self.notes = notes
        self.tensors = {}  # name -> dict, in creation order
        self.nodes = []
        self.outputs = []

    # -- tensors --------------------------------------------------------
    def input(self, name, shape, dtype="fp16", layout=None):
        t = {"shape": list(shape), "dtype": dtype}
        if layout:
            t["layout"] = layout
        t["input"] = True
        self._add(name, t)
        return name

    def const(self, name, shape, dtype="fp16"):
        self._add(name, {"shape": list(shape), "dtype": dtype, "const": True})
        return name

    def _add(self, name, t):
        assert name not in self.tensors, name
        self.tensors[name] = t

    def shape(self, name):
        return list(self.tensors[name]["shape"])

    # -- nodes ----------------------------------------------------------
    def node(self, name, op, inputs, shape, attrs=None, out=None):
        out = out or name
        self._add(out, {"shape": list(shape)})
        n = {"name": name, "op": op, "inputs": list(inputs), "outputs": [out]}
        if attrs:
            n["attrs"] = attrs
        self.nodes.append(n)
        return out

    # -- ops with shape rules (a subset of the simulator's) --------------
    def conv(self, name, x, cout, k, stride=1, pad=None, bias=False):
        n, cin, h, w = self.shape(x)
        pad = (k // 2) if pad is None else pad
        wt = self.const(name + ".weight", [cout, cin, k, k])
        ins = [x, wt]
        if bias:
            ins.append(self.const(name + ".bias", [cout]))
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        attrs = {"kernel": [k, k], "stride": stride, "pad": pad}
        return self.node(name, "Conv2D", ins, [n, cout, oh, ow], attrs)

    def bn(self, name, x):
        c = self.shape(x)[1]
        params = [self.const(name + "." + p, [c]) for p in ("gamma", "beta", "mean", "var")]
        return self.node(name, "BatchNorm", [x] + params, self.shape(x), {"epsilon": 1e-5})

    def unary(self, name, op, x, attrs=None):
        return self.node(name, op, [x], self.shape(x), attrs)

    def binary(self, name, op, a, b):
        sa, sb = self.shape(a), self.shape(b)
        r = max(len(sa), len(sb))
        sa = [1] * (r - len(sa)) + sa
        sb = [1] * (r - len(sb)) + sb
        out = []
        for da, db in zip(sa, sb):
            assert da == db or da == 1 or db == 1, (name, sa, sb)
            out.append(db if da == 1 else da)
        return self.node(name, op, [a, b], out)

    def maxpool(self, name, x, k, stride, pad=0):
        n, c, h, w = self.shape(x)
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        return self.node(name, "MaxPool", [x], [n, c, oh, ow], {"kernel": k, "stride": stride, "pad": pad})

    def matmul(self, name, a, b, op="MatMul"):
        sa, sb = self.shape(a), self.shape(b)
        assert sa[-1] == sb[-2], (name, sa, sb)
        batch = sa[:-2] if len(sa) >= len(sb) else sb[:-2]
        return self.node(name, op, [a, b], batch + [sa[-2], sb[-1]])

    def linear(self, name, x, n_out):
        """MatMul with a [K, N] weight, then Add of a [N] bias."""
        k = self.shape(x)[-1]
        w = self.const(name + ".weight", [k, n_out])
        y = self.matmul(name + ".matmul", x, w)
        b = self.const(name + ".bias", [n_out])
        return self.binary(name + ".bias_add", "Add", y, b)

    def reshape(self, name, x, shape):
        return self.node(name, "Reshape", [x], shape, {"shape": list(shape)})

    def transpose(self, name, x, perm):
        s = self.shape(x)
        return self.node(name, "Transpose", [x], [s[p] for p in perm], {"perm": list(perm)})

    def softmax(self, name, x, axis=-1):
        return self.node(name, "Softmax", [x], self.shape(x), {"axis": axis})

    def layernorm(self, name, x):
        h = self.shape(x)[-1]
        g = self.const(name + ".gamma", [h])
        b = self.const(name + ".beta", [h])
        return self.node(name, "LayerNorm", [x, g, b], self.shape(x), {"axis": -1, "epsilon": 1e-12})

    def concat(self, name, xs, axis):
        s = self.shape(xs[0])
        s[axis] = sum(self.shape(x)[axis] for x in xs)
        return self.node(name, "Concat", xs, s, {"axis": axis})

    # -- output ---------------------------------------------------------
    def dump(self, path):
        d = json.dumps
        lines = ["{"]
        lines.append('  "kind": "graph",')
        lines.append('  "name": %s,' % d(self.name))
        lines.append('  "notes": %s,' % d(self.notes))
        lines.append('  "dims": %s,' % d(self.dims))
        lines.append('  "tensors": {')
        items = list(self.tensors.items())
        for i, (k, v) in enumerate(items):
            lines.append("    %s: %s%s" % (d(k), d(v), "," if i + 1 < len(items) else ""))
        lines.append("  },")
        lines.append('  "nodes": [')
        for i, n in enumerate(self.nodes):
            lines.append("    %s%s" % (d(n), "," if i + 1 < len(self.nodes) else ""))
        lines.append("  ],")
        lines.append('  "outputs": %s' % d(self.outputs))
        lines.append("}")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def convbnrelu():
    g = Graph("convbnrelu", {"batch": 1},
              "docs/design.md §1.1 reference case: input [batch,64,56,56] fp16 NCHW, 3x3 conv 64->128 stride 1 pad 1, "
              "BatchNorm (folded into the conv by the compiler), ReLU (fused on the conv's output side). "
              "On the AX300 teaching chip the toolchain made 16 Cube sub-tasks (8 output-channel blocks x 2 "
              "spatial blocks).")
    x = g.input("x", ["batch", 64, 56, 56], layout="NCHW")
    c = g.conv("conv1", x, 128, 3, stride=1, pad=1)
    b = g.bn("bn1", c)
    y = g.unary("relu1", "ReLU", b)
    g.outputs = [y]
    return g


def resnet50():
    g = Graph("resnet50", {"batch": 1},
              "ResNet-50 v1.5 (torchvision layout) for 224x224 input, inference: stem 7x7/2 conv 64 + BN + ReLU, "
              "3x3/2 max pool; bottleneck stages layer1..layer4 with [3,4,6,3] blocks of widths 64/128/256/512 "
              "(expansion 4); the first block of each stage has a projection shortcut (1x1 conv + BN, "
              "'layerN.0.downsample.*') and, in layer2..layer4, stride 2 in its 3x3 conv (v1.5). Each block: "
              "conv1 1x1, bn1, relu1, conv2 3x3, bn2, relu2, conv3 1x1, bn3, add (residual), relu3. Head: "
              "GlobalAvgPool, Reshape to [batch,2048], MatMul with a [2048,1000] weight, Add of a [1000] bias. "
              "Weights are fp16 consts; conv layers have no bias (BN follows).")
    x = g.input("x", ["batch", 3, 224, 224], layout="NCHW")
    y = g.conv("conv1", x, 64, 7, stride=2, pad=3)
    y = g.bn("bn1", y)
    y = g.unary("relu", "ReLU", y)
    y = g.maxpool("maxpool", y, 3, 2, 1)
    cin = 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512]), start=1):
        for b in range(blocks):
            p = "layer%d.%d." % (stage, b)
            stride = 2 if (b == 0 and stage > 1) else 1
            identity = y
            t = g.conv(p + "conv1", y, width, 1, pad=0)
            t = g.bn(p + "bn1", t)
            t = g.unary(p + "relu1", "ReLU", t)
            t = g.conv(p + "conv2", t, width, 3, stride=stride, pad=1)
            t = g.bn(p + "bn2", t)
            t = g.unary(p + "relu2", "ReLU", t)
            t = g.conv(p + "conv3", t, width * 4, 1, pad=0)
            t = g.bn(p + "bn3", t)
            if b == 0:
                identity = g.conv(p + "downsample.conv", y, width * 4, 1, stride=stride, pad=0)
                identity = g.bn(p + "downsample.bn", identity)
            t = g.binary(p + "add", "Add", t, identity)
            y = g.unary(p + "relu3", "ReLU", t)
            cin = width * 4
    y = g.node("avgpool", "GlobalAvgPool", [y], ["batch", cin, 1, 1])
    y = g.reshape("flatten", y, ["batch", cin])
    y = g.linear("fc", y, 1000)
    g.outputs = [y]
    return g


def bert_layer():
    hidden, heads, head_dim, ffn = 768, 12, 64, 3072
    g = Graph("bert_layer", {"batch": 1, "seq_len": 128},
              "One BERT-base encoder layer (post-LN), inference: hidden 768, 12 heads of 64, FFN 3072, fp16. "
              "Self-attention: Q/K/V projections (MatMul [768,768] + bias Add); Q and V reshaped to "
              "[batch,seq_len,12,64] and transposed to [batch,12,seq_len,64], K transposed to "
              "[batch,12,64,seq_len]; scores = BatchMatMul(Q, K^T) [batch,12,seq_len,seq_len], Mul by the "
              "scale 1/sqrt(64) (a [1] const, broadcast), Softmax over the last axis, BatchMatMul with V; "
              "context transposed back and reshaped to [batch,seq_len,768]; output projection + bias, residual "
              "Add with the layer input, LayerNorm. FFN: MatMul 768->3072 + bias, GELU, MatMul 3072->768 + bias, "
              "residual Add, LayerNorm. No attention mask; dropout is absent at inference.")
    x = g.input("x", ["batch", "seq_len", hidden])
    split = ["batch", "seq_len", heads, head_dim]

    q = g.linear("attn.q", x, hidden)
    k = g.linear("attn.k", x, hidden)
    v = g.linear("attn.v", x, hidden)
    q = g.transpose("attn.q.transpose", g.reshape("attn.q.reshape", q, split), [0, 2, 1, 3])
    k = g.transpose("attn.k.transpose", g.reshape("attn.k.reshape", k, split), [0, 2, 3, 1])
    v = g.transpose("attn.v.transpose", g.reshape("attn.v.reshape", v, split), [0, 2, 1, 3])
    s = g.matmul("attn.scores", q, k, op="BatchMatMul")
    scale = g.const("attn.scale", [1])
    s = g.binary("attn.scale_mul", "Mul", s, scale)
    p = g.softmax("attn.softmax", s, -1)
    c = g.matmul("attn.context", p, v, op="BatchMatMul")
    c = g.transpose("attn.context.transpose", c, [0, 2, 1, 3])
    c = g.reshape("attn.context.reshape", c, ["batch", "seq_len", hidden])
    o = g.linear("attn.out", c, hidden)
    r = g.binary("attn.residual", "Add", o, x)
    h = g.layernorm("attn.layernorm", r)

    f = g.linear("ffn.up", h, ffn)
    f = g.unary("ffn.gelu", "GELU", f)
    f = g.linear("ffn.down", f, hidden)
    r = g.binary("ffn.residual", "Add", f, h)
    y = g.layernorm("ffn.layernorm", r)
    g.outputs = [y]
    return g


def segnet():
    classes = 21
    g = Graph("segnet", {"batch": 1},
              "A small encoder-decoder segmentation network (U-Net/SegNet style) for [batch,3,256,256] fp16 NCHW "
              "input, 21 classes, built to exercise layout boundaries. "
              "(1) 'input.normalize': Mul of the NCHW input by a per-channel [1,3,1,1] scale before the first conv, "
              "so a layout conversion can be hoisted to the graph input. "
              "(2) Encoder: enc1 (conv3x3 3->32, BN, ReLU) at 256x256; pool1 2x2 max pool; enc2 (two conv3x3 "
              "32->64->64 with BN+ReLU) at 128x128; pool2; enc3 (two conv3x3 64->128->128 with BN+ReLU) at 64x64; "
              "pool3 to [batch,128,32,32]. "
              "(3) Context branch on ND data: Reshape to [batch,128,1024], Transpose to [batch,1024,128], Softmax "
              "over channels per pixel, Transpose and Reshape back to [batch,128,32,32], Mul with the pool3 features "
              "(channel attention). Cube work around it wants NC1HWC0, so the branch forces conversions out of "
              "NC1HWC0 to ND and back. "
              "(4) Decoder, three stages up3/up2/up1: upsampling x2 as a 1x1 conv to 4x the channels followed by "
              "a depth-to-space (Reshape to [batch,C,2,2,H,W], Transpose [0,1,4,2,5,3], Reshape to "
              "[batch,C,2H,2W]); skip connection by Concat on channels with enc3/enc2/enc1; then conv3x3 + BN + "
              "ReLU (dec3 192->64, dec2 96->32, dec1 48->32). "
              "(5) Head: 1x1 conv 32->21 with bias, Softmax over the class axis (axis 1) per pixel.")
    x = g.input("x", ["batch", 3, 256, 256], layout="NCHW")
    scale = g.const("input.scale", [1, 3, 1, 1])
    x = g.binary("input.normalize", "Mul", x, scale)

    def block(name, t, cout):
        t = g.conv(name + ".conv", t, cout, 3, pad=1)
        t = g.bn(name + ".bn", t)
        return g.unary(name + ".relu", "ReLU", t)

    e1 = block("enc1", x, 32)
    t = g.maxpool("pool1", e1, 2, 2)
    t = block("enc2.0", t, 64)
    e2 = block("enc2.1", t, 64)
    t = g.maxpool("pool2", e2, 2, 2)
    t = block("enc3.0", t, 128)
    e3 = block("enc3.1", t, 128)
    p3 = g.maxpool("pool3", e3, 2, 2)

    # Channel attention on ND data.
    _, c, h, w = g.shape(p3)
    a = g.reshape("context.flatten", p3, ["batch", c, h * w])
    a = g.transpose("context.to_pixels", a, [0, 2, 1])
    a = g.softmax("context.softmax", a, -1)
    a = g.transpose("context.to_channels", a, [0, 2, 1])
    a = g.reshape("context.unflatten", a, ["batch", c, h, w])
    t = g.binary("context.gate", "Mul", p3, a)

    def up(name, t, cout):
        _, _, hh, ww = g.shape(t)
        t = g.conv(name + ".expand", t, cout * 4, 1, pad=0)
        t = g.reshape(name + ".split", t, ["batch", cout, 2, 2, hh, ww])
        t = g.transpose(name + ".shuffle", t, [0, 1, 4, 2, 5, 3])
        return g.reshape(name + ".merge", t, ["batch", cout, hh * 2, ww * 2])

    t = up("up3", t, 64)
    t = g.concat("skip3", [t, e3], 1)
    t = block("dec3", t, 64)
    t = up("up2", t, 32)
    t = g.concat("skip2", [t, e2], 1)
    t = block("dec2", t, 32)
    t = up("up1", t, 16)
    t = g.concat("skip1", [t, e1], 1)
    t = block("dec1", t, 32)
    t = g.conv("head.conv", t, classes, 1, pad=0, bias=True)
    y = g.softmax("head.softmax", t, 1)
    g.outputs = [y]
    return g


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = tool_args.ArgumentParser(description=__doc__.split("\n\n")[0],
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=os.path.join(here, "..", "models"),
                        help="folder to write the graphs into (default: models/ next to tools/)")
    out = parser.parse_args().out_dir
    os.makedirs(out, exist_ok=True)
    for make in (convbnrelu, resnet50, bert_layer, segnet):
        g = make()
        path = os.path.join(out, g.name + ".json")
        g.dump(path)
        print("wrote %s (%d nodes, %d tensors)" % (os.path.normpath(path), len(g.nodes), len(g.tensors)))


if __name__ == "__main__":
    main()
